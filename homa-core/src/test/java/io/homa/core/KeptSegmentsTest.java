package io.homa.core;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.IntPredicate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A message whose memory keeps segments ({@link PayloadMemory#keepSegment}): delivered as its
 * segments in order, one part each, the refused ones copied; every part freed exactly once; what
 * it is charged never grows by more than the engine checked first.
 */
class KeptSegmentsTest {
    private static final int SEG = 1432;

    /** Heap memory that keeps segments the rule accepts (as copies it can track) and checks frees. */
    private static final class KeepingMemory implements PayloadMemory {
        final IntPredicate keeps;
        final List<Part> handedOut = new ArrayList<>();
        int keptSegments;
        int allocatedParts;

        KeepingMemory(IntPredicate keeps) {
            this.keeps = keeps;
        }

        int live() {
            int n = 0;
            for (Part p : handedOut) {
                n += p.freed ? 0 : 1;
            }
            return n;
        }

        @Override
        public PayloadBuffer keep(ByteBuffer datagram, int index, int length) {
            return track(PayloadMemory.HEAP.keep(datagram, index, length));
        }

        @Override
        public PayloadBuffer allocate(int length) {
            allocatedParts++;
            return track(PayloadMemory.HEAP.allocate(length));
        }

        @Override
        public PayloadBuffer keepSegment(ByteBuffer datagram, int index, int length) {
            if (!keeps.test(length)) {
                return null;
            }
            keptSegments++;
            return track(PayloadMemory.HEAP.keep(datagram, index, length));
        }

        private Part track(PayloadBuffer b) {
            Part p = new Part(b);
            handedOut.add(p);
            return p;
        }
    }

    private static final class Part implements PayloadBuffer {
        final PayloadBuffer b;
        boolean freed;

        Part(PayloadBuffer b) {
            this.b = b;
        }

        @Override
        public ByteBuffer bytes() {
            if (freed) {
                throw new IllegalStateException("read after free");
            }
            return b.bytes();
        }

        @Override
        public void free() {
            if (freed) {
                throw new IllegalStateException("freed twice");
            }
            freed = true;
        }
    }

    private static IncomingMessage message(int length) {
        Rpc rpc = new Rpc(3, new Peer(new InetSocketAddress("10.0.0.9", 5000)), false);
        IncomingMessage m = new IncomingMessage(rpc, length, 0);
        rpc.in = m;
        return m;
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    /**
     * Writes {@code [off, off+n)} of {@code data} from a datagram with a header before it, as the
     * engine does, checking that the footprint grows by no more than the bound asked first.
     */
    private static int write(IncomingMessage m, PayloadMemory memory, byte[] data, int off, int n) {
        ByteBuffer datagram = ByteBuffer.allocate(n + 60);
        datagram.put(60 - 1, (byte) 0x5a); // a header byte next to the payload, which must never leak in
        datagram.put(60, data, off, n);
        long bound = m.footprintGrowthFor(off, n);
        long before = m.footprint();
        int added = m.write(off, datagram, 60, n, memory);
        assertTrue(m.footprint() - before <= bound,
                "footprint grew by " + (m.footprint() - before) + ", more than the bound " + bound);
        return added;
    }

    @Test
    void inOrderSegments_deliveredAsThoseSegments_noChunk() {
        int length = 10 * SEG + 77;
        byte[] data = random(length, 1);
        KeepingMemory memory = new KeepingMemory(n -> true);
        IncomingMessage m = message(length);
        for (int off = 0; off < length; off += SEG) {
            assertEquals(Math.min(SEG, length - off), write(m, memory, data, off, Math.min(SEG, length - off)));
        }
        assertTrue(m.complete());
        assertEquals(0, m.chunkTableLength(), "no chunk table");
        assertEquals(0, memory.allocatedParts, "nothing copied into memory of its own");
        ReceivedMessage r = m.toMessage();
        assertEquals(11, r.partCount());
        assertArrayEquals(data, r.toByteArray());
        assertEquals(11, memory.live());
        r.release();
        assertEquals(0, memory.live());
    }

    @Test
    void firstSegmentRefused_theMessageGoesIntoChunks_evenIfLaterOnesCouldBeKept() {
        int length = 5 * SEG;
        byte[] data = random(length, 2);
        boolean[] first = {true};
        KeepingMemory memory = new KeepingMemory(n -> {
            boolean refuse = first[0];
            first[0] = false;
            return !refuse;
        });
        IncomingMessage m = message(length);
        for (int off = 0; off < length; off += SEG) {
            write(m, memory, data, off, SEG);
        }
        assertEquals(1, m.chunkTableLength());
        assertEquals(0, memory.keptSegments, "asked once, for the first segment");
        ReceivedMessage r = m.toMessage();
        assertArrayEquals(data, r.toByteArray());
        r.release();
        assertEquals(0, memory.live());
    }

    @Test
    void refusedLaterSegments_copiedIntoPartsOfTheirOwn_inOrder() {
        int length = 6 * SEG;
        byte[] data = random(length, 3);
        int[] asked = {0};
        KeepingMemory memory = new KeepingMemory(n -> asked[0]++ % 2 == 0);
        IncomingMessage m = message(length);
        for (int off = 0; off < length; off += SEG) {
            write(m, memory, data, off, SEG);
        }
        assertEquals(3, memory.keptSegments);
        assertEquals(3, memory.allocatedParts);
        ReceivedMessage r = m.toMessage();
        assertEquals(6, r.partCount());
        assertArrayEquals(data, r.toByteArray());
        r.release();
        assertEquals(0, memory.live());
    }

    @Test
    void reverseOrderAndOverlappingRetransmissions_keepOnlyNewBytes_inOffsetOrder() {
        int length = 8 * SEG;
        byte[] data = random(length, 4);
        KeepingMemory memory = new KeepingMemory(n -> true);
        IncomingMessage m = message(length);
        for (int off = length - SEG; off >= SEG; off -= 2 * SEG) {
            write(m, memory, data, off, SEG); // every other segment, from the end
        }
        // A retransmission cut elsewhere: covers segments 0-2 and half of 3, of which 1 and 3 came.
        int n = 3 * SEG + SEG / 2;
        assertEquals(2 * SEG, write(m, memory, data, 0, n), "segments 0 and 2 were new");
        assertEquals(0, write(m, memory, data, SEG, SEG), "a duplicate keeps nothing");
        for (int off = 4 * SEG; off < length; off += 2 * SEG) {
            write(m, memory, data, off, SEG);
        }
        assertTrue(m.complete());
        ReceivedMessage r = m.toMessage();
        assertEquals(length, r.length());
        assertArrayEquals(data, r.toByteArray());
        int parts = r.partCount();
        r.release();
        assertEquals(parts, memory.handedOut.size(), "only new bytes became parts");
        assertEquals(0, memory.live());
    }

    @Test
    void discard_freesEveryPart() {
        int length = 20 * SEG;
        byte[] data = random(length, 5);
        KeepingMemory memory = new KeepingMemory(n -> n > 100);
        IncomingMessage m = message(length);
        write(m, memory, data, 0, SEG);
        write(m, memory, data, 5 * SEG, 50); // refused: copied
        write(m, memory, data, 9 * SEG, SEG);
        m.discard();
        assertEquals(0, memory.live());
        assertThrows(IllegalStateException.class, () -> memory.handedOut.get(0).bytes());
    }

    @Test
    void chargedForItsBytesAndItsParts() {
        int length = 4 * SEG;
        byte[] data = random(length, 6);
        KeepingMemory memory = new KeepingMemory(n -> true);
        IncomingMessage m = message(length);
        long empty = m.footprint();
        for (int off = 0; off < length; off += SEG) {
            write(m, memory, data, off, SEG);
        }
        assertEquals(length, m.allocated);
        assertTrue(m.footprint() - empty >= length + 4L * (IncomingMessage.SLOT + IncomingMessage.PART),
                "bytes plus each part's table slot and objects");
    }

    @Test
    void wholeMessageInOneDatagram_stillKeptAsItIs_andAPieceOfItLaterIsADuplicate() {
        byte[] data = random(900, 7);
        KeepingMemory memory = new KeepingMemory(n -> true);
        IncomingMessage m = message(900);
        write(m, memory, data, 0, 900);
        assertEquals(0, write(m, memory, data, 100, 200));
        assertEquals(0, memory.keptSegments, "the whole message is kept by keep(), not as a segment");
        ReceivedMessage r = m.toMessage();
        assertArrayEquals(data, r.toByteArray());
        r.release();
        assertEquals(0, memory.live());
    }

    @Property(tries = 80)
    void property_randomSegmentsRetransmissionsAndRefusals_identicalBytesNoLeak(
            @ForAll @IntRange(min = 2, max = 200_000) int length,
            @ForAll @IntRange(min = 1, max = 9_000) int maxSegment,
            @ForAll @IntRange(min = 0, max = 3) int refuseEvery,
            @ForAll long seed) {
        byte[] data = random(length, seed);
        int[] asked = {0};
        KeepingMemory memory = new KeepingMemory(n -> refuseEvery == 0 || asked[0]++ % (refuseEvery + 1) != 0);
        IncomingMessage m = message(length);
        Random rnd = new Random(seed);
        for (int i = 0; i < 200; i++) {
            int off = rnd.nextInt(length);
            int n = 1 + rnd.nextInt(Math.min(maxSegment, length - off));
            if (off == 0 && n == length) {
                n--; // not the whole message in one segment: that is keep()'s case
            }
            if (n > 0) {
                write(m, memory, data, off, n);
            }
        }
        int[] gap = new int[2];
        while (m.ranges.gaps(length, gap, 1) == 1) {
            int n = Math.min(maxSegment, gap[1] - gap[0]);
            int off = gap[0] > 0 ? gap[0] : gap[1] - n;
            assertEquals(n, write(m, memory, data, off, n));
        }
        assertTrue(m.complete());
        assertEquals(length, m.allocated, "each byte charged once");
        ReceivedMessage r = m.toMessage();
        assertArrayEquals(data, r.toByteArray());
        r.release();
        assertEquals(0, memory.live());
    }
}
