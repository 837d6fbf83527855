package io.homa.core;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Reassembly into 64 KiB chunks allocated on first touch, and the receiver's byte accounting. */
class IncomingMessageTest {
    private static final int CHUNK = IncomingMessage.CHUNK;
    private static final int SEG = 1432;

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

    /** Writes {@code [offset, offset+n)} of {@code data}, read from a larger buffer at an odd index. */
    private static int write(IncomingMessage m, byte[] data, int offset, int n) {
        ByteBuffer src = ByteBuffer.allocate(n + 100);
        src.position(37);
        src.put(data, offset, n);
        src.position(3).limit(37 + n); // a datagram ending with the segment; position is not used
        int r = m.write(offset, src, 37, n);
        assertEquals(3, src.position());
        assertEquals(37 + n, src.limit());
        return r;
    }

    private static byte[] concat(ByteBuffer[] buffers) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (ByteBuffer b : buffers) {
            byte[] part = new byte[b.remaining()];
            b.duplicate().get(part);
            out.write(part, 0, part.length);
        }
        return out.toByteArray();
    }

    private static void assertAllViewsEqual(byte[] expected, ReceivedMessage r) {
        assertEquals(expected.length, r.length());
        assertArrayEquals(expected, r.toByteArray(), "toByteArray");
        byte[] copy = new byte[expected.length + 20];
        r.copyTo(copy, 10);
        byte[] mid = new byte[expected.length];
        System.arraycopy(copy, 10, mid, 0, expected.length);
        assertArrayEquals(expected, mid, "copyTo");
        assertArrayEquals(expected, concat(r.buffers()), "buffers");
    }

    // ------------------------------------------------------------------ fresh state

    @Test
    void fresh_nothingReceivedNothingAllocated() {
        IncomingMessage m = message(200_000);
        assertEquals(0, m.received());
        assertEquals(200_000, m.remaining());
        assertFalse(m.complete());
        assertEquals(0, m.allocated);
        assertEquals(0, m.outstanding());
    }

    @Test
    void zeroLength_completeAtOnceWithEmptyBytes() {
        IncomingMessage m = message(0);
        assertTrue(m.complete());
        assertEquals(0, m.remaining());
        assertEquals(0, m.allocationFor(0, 0));
        ReceivedMessage r = m.toMessage();
        assertEquals(0, r.length());
        assertEquals(0, r.toByteArray().length);
        assertEquals(0, concat(r.buffers()).length);
        r.copyTo(new byte[0], 0);
    }

    // ------------------------------------------------------------------ allocation

    @Test
    void allocationFor_firstSegment_wholeFirstChunk() {
        assertEquals(CHUNK, message(200_000).allocationFor(0, SEG));
    }

    @Test
    void allocationFor_smallMessage_onlyItsLength() {
        assertEquals(5_000, message(5_000).allocationFor(0, SEG));
    }

    @Test
    void allocationFor_lastPartialChunk_onlyItsLength() {
        int length = 3 * CHUNK + 3392;
        assertEquals(3392, message(length).allocationFor(length - 100, 100));
    }

    @Test
    void allocationFor_segmentSpanningChunkBoundary_countsBothChunks() {
        assertEquals(2L * CHUNK, message(200_000).allocationFor(CHUNK - 10, SEG));
    }

    @Test
    void allocationFor_segmentEndingExactlyAtBoundary_oneChunk() {
        assertEquals(CHUNK, message(200_000).allocationFor(CHUNK - SEG, SEG));
        assertEquals(CHUNK, message(200_000).allocationFor(CHUNK, SEG));
    }

    @Test
    void allocationFor_afterWrite_onlyUntouchedChunks() {
        IncomingMessage m = message(200_000);
        byte[] data = random(200_000, 1);
        write(m, data, 0, SEG);
        assertEquals(CHUNK, m.allocated);
        assertEquals(0, m.allocationFor(SEG, SEG));
        assertEquals(CHUNK, m.allocationFor(CHUNK - 10, SEG));
        assertEquals(0, m.allocationFor(10, 100));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 100, CHUNK - 1, CHUNK, CHUNK + 1})
    void allocationFor_emptySegment_allocatesNothing(int offset) {
        assertEquals(0, message(200_000).allocationFor(offset, 0));
    }

    @Test
    void allocationFor_nearMaximumLength_noOverflow() {
        int length = Integer.MAX_VALUE - 65_536;
        IncomingMessage m = message(length);
        assertEquals(65_535, m.allocationFor(length - 10, 10));
        assertEquals(CHUNK, m.allocationFor(length - 65_535 - 1, 1));
        assertEquals(0, m.allocated);
    }

    @Test
    void write_allocatesOnlyTouchedChunks() {
        IncomingMessage m = message(10 * CHUNK);
        byte[] data = random(10 * CHUNK, 2);
        write(m, data, 5 * CHUNK + 7, SEG);
        assertEquals(CHUNK, m.allocated);
        write(m, data, 9 * CHUNK - 5, 10);
        assertEquals(3L * CHUNK, m.allocated);
    }

    @Test
    void write_lastChunkSizedToMessageEnd() {
        IncomingMessage m = message(CHUNK + 1);
        byte[] data = random(CHUNK + 1, 3);
        assertEquals(1, write(m, data, CHUNK, 1));
        assertEquals(1, m.allocated);
    }

    @Test
    void write_refusedSegment_allocatesNothing() {
        IncomingMessage m = message(4 * CHUNK);
        byte[] data = random(4 * CHUNK, 4);
        for (int i = 0; i < ReceivedRanges.MAX_INTERVALS; i++) {
            assertEquals(1, write(m, data, 2 * i, 1));
        }
        long allocated = m.allocated;
        assertEquals(-1, write(m, data, 3 * CHUNK, SEG));
        assertEquals(allocated, m.allocated);
        assertEquals(ReceivedRanges.MAX_INTERVALS, m.received());
    }

    // ------------------------------------------------------------------ write results

    @Test
    void write_returnsNewBytes_duplicateZeroOverlapPartial() {
        IncomingMessage m = message(10_000);
        byte[] data = random(10_000, 5);
        assertEquals(SEG, write(m, data, 0, SEG));
        assertEquals(0, write(m, data, 0, SEG));
        assertEquals(1000, write(m, data, 1000, SEG)); // [1000,1432) was there already
        assertEquals(1000 + SEG, m.received());
        assertEquals(100, write(m, data, 5000, 100));
        assertEquals(0, write(m, data, 5020, 50));
    }

    @Test
    void write_duplicate_doesNotOverwriteReceivedBytes() {
        IncomingMessage m = message(100);
        byte[] data = random(100, 6);
        write(m, data, 0, 100);
        byte[] other = random(100, 7);
        assertEquals(0, write(m, other, 0, 100));
        assertArrayEquals(data, m.toMessage().toByteArray());
    }

    @Test
    void outstanding_isGrantedMinusReceived_neverNegative() {
        IncomingMessage m = message(100_000);
        m.granted = 10_000;
        assertEquals(10_000, m.outstanding());
        write(m, random(100_000, 8), 0, 4_000);
        assertEquals(6_000, m.outstanding());
        assertEquals(96_000, m.remaining());
        write(m, random(100_000, 8), 4_000, 20_000);
        assertEquals(0, m.outstanding());
    }

    // ------------------------------------------------------------------ reassembly

    @Test
    void reassembly_inOrderAcrossChunkBoundaries_identicalBytes() {
        int length = 3 * CHUNK + 1234;
        byte[] data = random(length, 9);
        IncomingMessage m = message(length);
        for (int off = 0; off < length; off += SEG) {
            write(m, data, off, Math.min(SEG, length - off));
        }
        assertTrue(m.complete());
        assertEquals(length, m.allocated);
        assertAllViewsEqual(data, m.toMessage());
    }

    @Test
    void reassembly_reverseOrder_identicalBytes() {
        int length = 2 * CHUNK + 77;
        byte[] data = random(length, 10);
        IncomingMessage m = message(length);
        int last = (length - 1) / SEG * SEG;
        for (int off = last; off >= 0; off -= SEG) {
            write(m, data, off, Math.min(SEG, length - off));
        }
        assertTrue(m.complete());
        assertAllViewsEqual(data, m.toMessage());
    }

    @Test
    void reassembly_exactlyOneChunk() {
        byte[] data = random(CHUNK, 11);
        IncomingMessage m = message(CHUNK);
        write(m, data, 0, CHUNK);
        ReceivedMessage r = m.toMessage();
        assertEquals(1, r.buffers().length);
        assertAllViewsEqual(data, r);
    }

    @Test
    void reassembly_oneSegmentCoveringWholeMultiChunkMessage() {
        int length = 2 * CHUNK + 5;
        byte[] data = random(length, 12);
        IncomingMessage m = message(length);
        assertEquals(length, write(m, data, 0, length));
        ReceivedMessage r = m.toMessage();
        assertEquals(3, r.buffers().length);
        assertAllViewsEqual(data, r);
    }

    @Test
    void reassembly_chunksFullExceptLast() {
        int length = 3 * CHUNK + 10;
        byte[] data = random(length, 13);
        IncomingMessage m = message(length);
        write(m, data, 0, length);
        ByteBuffer[] chunks = m.toMessage().buffers();
        assertEquals(4, chunks.length);
        for (int i = 0; i < 3; i++) {
            assertEquals(CHUNK, chunks[i].remaining());
        }
        assertEquals(10, chunks[3].remaining());
    }

    @Test
    void wholeMessageInOneSegment_keptNotAllocated() {
        CountingPayloadMemory memory = new CountingPayloadMemory();
        byte[] data = random(1000, 15);
        IncomingMessage m = message(1000);
        ByteBuffer src = ByteBuffer.allocate(1100);
        src.put(50, data);
        assertEquals(1000, m.write(0, src, 50, 1000, memory));
        assertEquals(1, memory.kept);
        assertEquals(0, memory.allocated);
        assertEquals(1000, m.allocated, "charged as one chunk");
        ReceivedMessage r = m.toMessage();
        assertAllViewsEqual(data, r);
        assertEquals(1, memory.live());
        r.release();
        r.release();
        assertEquals(0, memory.live(), "released once");
    }

    @Test
    void multiSegmentMessage_chunksFromMemory_discardReleasesThem() {
        CountingPayloadMemory memory = new CountingPayloadMemory();
        int length = 2 * CHUNK + 7;
        byte[] data = random(length, 16);
        IncomingMessage m = message(length);
        ByteBuffer src = ByteBuffer.wrap(data);
        m.write(0, src, 0, SEG, memory);
        m.write(CHUNK + 3, src, CHUNK + 3, SEG, memory); // spans nothing but chunk 1
        assertEquals(0, memory.kept);
        assertEquals(2, memory.allocated);
        assertEquals(m.write(0, src, 0, SEG, memory), 0, "duplicate");
        assertEquals(2, memory.allocated, "a duplicate allocates nothing");
        m.discard();
        assertEquals(0, memory.live());
    }

    @Test
    void firstSegmentOfLongerMessage_notKept() {
        CountingPayloadMemory memory = new CountingPayloadMemory();
        IncomingMessage m = message(5000);
        m.write(0, ByteBuffer.allocate(SEG), 0, SEG, memory);
        assertEquals(0, memory.kept);
        assertEquals(1, memory.allocated);
        m.discard();
        assertEquals(0, memory.live());
    }

    @Test
    void reassembly_oneMillionBytesShuffledWithDuplicates_identicalBytes() {
        int length = 1_000_000;
        byte[] data = random(length, 14);
        List<Integer> offsets = new ArrayList<>();
        for (int off = 0; off < length; off += SEG) {
            offsets.add(off);
        }
        Collections.shuffle(offsets, new Random(15));
        IncomingMessage m = message(length);
        long fresh = 0;
        for (int i = 0; i < offsets.size(); i++) {
            int off = offsets.get(i);
            fresh += write(m, data, off, Math.min(SEG, length - off));
            if (i % 10 == 0) {
                int dup = offsets.get(i / 2);
                assertEquals(0, write(m, data, dup, Math.min(SEG, length - dup)));
            }
        }
        assertEquals(length, fresh);
        assertTrue(m.complete());
        assertEquals(length, m.allocated);
        assertAllViewsEqual(data, m.toMessage());
    }

    @Property(tries = 60)
    void property_randomSegmentsThenGapFill_identicalBytes(
            @ForAll @IntRange(min = 1, max = 300_000) int length,
            @ForAll @IntRange(min = 1, max = 70_000) int maxSegment,
            @ForAll long seed) {
        byte[] data = random(length, seed);
        IncomingMessage m = message(length);
        Random rnd = new Random(seed);
        for (int i = 0; i < 300; i++) {
            int off = rnd.nextInt(length);
            int n = 1 + rnd.nextInt(Math.min(maxSegment, length - off));
            checkedWrite(m, data, off, n);
        }
        // fill what is missing in segments of at most maxSegment, each touching received bytes
        // (a segment touching nothing may be refused once the interval limit is reached)
        int[] gap = new int[2];
        while (m.ranges.gaps(length, gap, 1) == 1) {
            int n = Math.min(maxSegment, gap[1] - gap[0]);
            int off = gap[0] > 0 ? gap[0] : gap[1] - n;
            assertEquals(n, checkedWrite(m, data, off, n));
        }
        assertTrue(m.complete());
        assertEquals(length, m.allocated);
        assertAllViewsEqual(data, m.toMessage());
    }

    private static int checkedWrite(IncomingMessage m, byte[] data, int off, int n) {
        long expectAlloc = m.allocationFor(off, n);
        long before = m.allocated;
        long receivedBefore = m.received();
        long footprintBefore = m.footprint();
        long growthBound = m.footprintGrowthFor(off, n);
        int added = write(m, data, off, n);
        assertTrue(m.footprint() - footprintBefore <= growthBound,
                "footprint grew by " + (m.footprint() - footprintBefore) + " > bound " + growthBound);
        assertTrue(m.footprint() >= m.allocated + IncomingMessage.BOOKKEEPING, "footprint covers the chunks");
        if (added > 0) {
            assertEquals(before + expectAlloc, m.allocated, "allocationFor disagrees with write");
        } else {
            assertEquals(before, m.allocated, "refused or duplicate segment allocated memory");
        }
        assertEquals(receivedBefore + Math.max(0, added), m.received());
        assertTrue(m.allocated <= m.length);
        return added;
    }

    // ------------------------------------------------------------------ footprint (what the limits charge)

    @Test
    void hugeClaimedLength_chunkTableNotSizedFromIt() {
        IncomingMessage m = message(Integer.MAX_VALUE - 65_536);
        assertEquals(0, m.chunkTableLength(), "no table for bytes that never arrived");
        long fresh = m.footprint();
        assertTrue(fresh < 1024, "a message that claims 2 GiB costs " + fresh + " bytes before data");
        write(m, random(1432, 1), 0, 1432);
        assertEquals(1, m.chunkTableLength());
        assertEquals(CHUNK, m.allocated);
        assertTrue(m.footprint() < CHUNK + 1024, "one chunk and bookkeeping: " + m.footprint());
    }

    @Test
    void chunkTable_growsOnlyAsFarAsBytesArrive_reachesFullLengthWhenComplete() {
        int length = 10 * CHUNK + 7;
        byte[] data = random(length, 3);
        IncomingMessage m = message(length);
        write(m, data, 3 * CHUNK, 100);
        assertEquals(4, m.chunkTableLength());
        write(m, data, 0, 3 * CHUNK);
        assertEquals(4, m.chunkTableLength(), "no growth below the highest chunk written");
        write(m, data, 3 * CHUNK, length - 3 * CHUNK);
        assertEquals(11, m.chunkTableLength(), "capped at the chunks the message needs");
        assertTrue(m.complete());
        assertAllViewsEqual(data, m.toMessage());
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 1432, CHUNK, CHUNK + 1, 10 * CHUNK, Integer.MAX_VALUE - 65_536})
    void footprintOfNew_equalsFootprintAfterFirstSegment(int length) {
        int n = Math.min(length, 1432);
        int offset = length == 0 ? 0 : Math.max(0, Math.min(length - n, CHUNK - 5));
        IncomingMessage m = message(length);
        if (n > 0) {
            write(m, random(offset + n, 9), offset, n);
        }
        assertEquals(IncomingMessage.footprintOfNew(length, offset, n), m.footprint());
    }

    @Test
    void footprint_countsRangeGrowthFromFragments() {
        int length = 1_000_000;
        IncomingMessage m = message(length);
        byte[] data = random(length, 5);
        long before = m.footprint();
        for (int i = 0; i < ReceivedRanges.MAX_INTERVALS; i++) {
            checkedWrite(m, data, i * 2, 1); // 256 one-byte fragments, each its own interval
        }
        assertEquals(ReceivedRanges.MAX_INTERVALS, m.ranges.intervals());
        assertEquals(-1, write(m, data, 1000, 1), "a 257th interval is refused");
        assertTrue(m.footprint() - before >= (long) IncomingMessage.SLOT * (ReceivedRanges.MAX_INTERVALS - 4),
                "the ranges' growth is charged");
    }

    @Test
    void grantFields_startZero() {
        IncomingMessage m = message(10);
        assertEquals(0, m.granted);
        assertEquals(0, m.grantPriority);
        assertFalse(m.grantable);
        assertNull(m.rpc.out);
    }

    /** A kept datagram that is also a message (as the Netty shell's parts are). */
    private static final class SelfMessage extends ReceivedMessage implements PayloadBuffer {
        final ByteBuffer bytes;
        int frees;

        SelfMessage(ByteBuffer bytes) {
            super(bytes.remaining());
            this.bytes = bytes;
        }

        @Override
        public ByteBuffer bytes() {
            return bytes;
        }

        @Override
        public void free() {
            frees++;
        }
    }

    /** Keeps whole messages as {@link SelfMessage}s, allocates on the heap otherwise. */
    private static final class SelfKeepingMemory implements PayloadMemory {
        final List<SelfMessage> kept = new ArrayList<>();

        @Override
        public PayloadBuffer keep(ByteBuffer view, int index, int length) {
            byte[] copy = new byte[length];
            view.get(index, copy);
            SelfMessage m = new SelfMessage(ByteBuffer.wrap(copy));
            kept.add(m);
            return m;
        }

        @Override
        public PayloadBuffer allocate(int length) {
            return HEAP.allocate(length);
        }
    }

    @Test
    void aKeptPartThatIsAMessage_isDeliveredAsItIs_andFreedOnceOnRelease() {
        byte[] data = random(1000, 5);
        IncomingMessage m = message(1000);
        SelfKeepingMemory memory = new SelfKeepingMemory();
        assertEquals(1000, m.write(0, ByteBuffer.wrap(data), 0, 1000, memory));
        ReceivedMessage r = m.toMessage();
        assertEquals(1, memory.kept.size());
        SelfMessage self = memory.kept.get(0);
        assertTrue(r == self, "one object per message: the kept part itself");
        assertAllViewsEqual(data, r);
        r.release();
        r.release();
        assertEquals(1, self.frees, "the message's release frees its memory once");
    }

    @Test
    void aKeptPartThatIsAMessage_isFreedWhenTheMessageIsDiscarded() {
        IncomingMessage m = message(500);
        SelfKeepingMemory memory = new SelfKeepingMemory();
        m.write(0, ByteBuffer.wrap(random(500, 6)), 0, 500, memory);
        m.discard();
        assertEquals(1, memory.kept.get(0).frees);
    }

    @Test
    void aMessageSubclassThatIsNoPart_isRefused() {
        class NotAPart extends ReceivedMessage {
            NotAPart() {
                super(1);
            }
        }
        IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, NotAPart::new);
        assertTrue(e.getMessage().contains("no PayloadBuffer"), e.getMessage());
    }
}
