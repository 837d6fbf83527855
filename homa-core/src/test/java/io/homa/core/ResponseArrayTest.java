package io.homa.core;

import io.homa.core.wire.PacketType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A response whose request asked for one array ({@link OutgoingPayload#responseAsArray()}): up to
 * {@link OutgoingPayload#MAX_RESPONSE_ARRAY} bytes it moves into one heap array of its length
 * once an eighth of it has arrived (at once when it fits a chunk), charged in full from then on,
 * and {@link ReceivedMessage#takeByteArray()} hands that array over; a longer one, and every
 * other message, goes in 64 KiB chunks of the engine's memory as before.
 */
class ResponseArrayTest {
    private static final int CHUNK = IncomingMessage.CHUNK;
    private static final int SEG = 1432;

    /** An incoming message of a client RPC whose request asked for an array ({@code asArray}) or not. */
    private static IncomingMessage response(int length, boolean asArray) {
        Rpc rpc = new Rpc(4, new Peer(new InetSocketAddress("10.0.0.9", 5000)), true);
        rpc.responseAsArray = asArray;
        IncomingMessage m = new IncomingMessage(rpc, length, 0);
        rpc.in = m;
        return m;
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** Writes every segment of {@code data}, in a seeded random order nearby; returns the message's memory after the first. */
    private static long writeShuffled(IncomingMessage m, byte[] data, PayloadMemory memory, long seed) {
        List<Integer> offsets = new ArrayList<>();
        for (int o = 0; o < data.length; o += SEG) {
            offsets.add(o);
        }
        // Out of order within windows of 32 segments (a receiver refuses more fragmentation than that).
        Random random = new Random(seed);
        for (int i = 0; i < offsets.size(); i += 32) {
            Collections.shuffle(offsets.subList(i, Math.min(offsets.size(), i + 32)), random);
        }
        long afterFirst = -1;
        ByteBuffer datagram = ByteBuffer.wrap(data);
        for (int o : offsets) {
            int n = Math.min(SEG, data.length - o);
            assertEquals(n, m.write(o, datagram, o, n, memory));
            if (afterFirst < 0) {
                afterFirst = m.allocated;
            }
        }
        return afterFirst;
    }

    @ParameterizedTest
    @ValueSource(ints = {2_000, CHUNK, CHUNK + 1, 1_000_000, OutgoingPayload.MAX_RESPONSE_ARRAY})
    void aResponseAskedForAsAnArray_movesIntoOneOnceAnEighthArrived_andIsHandedOverWithoutACopy(int length) {
        CountingPayloadMemory memory = new CountingPayloadMemory();
        IncomingMessage m = response(length, true);
        int arrayAt = IncomingMessage.arrayAt(m.rpc, length);
        assertEquals(length <= CHUNK ? 0 : length / 8, arrayAt);
        byte[] data = random(length, length);
        ByteBuffer datagram = ByteBuffer.wrap(data);
        long arrayAfter = -1; // received bytes when the message moved into its array
        for (int o = 0; o < length; o += SEG) {
            int n = Math.min(SEG, length - o);
            long predicted = m.footprintGrowthFor(o, n);
            long before = m.footprint();
            boolean inChunks = m.allocated < length;
            assertEquals(n, m.write(o, datagram, o, n, memory));
            assertTrue(m.footprint() - before <= predicted, "the growth admitted covers the write at " + o);
            if (inChunks && m.allocated == length) {
                arrayAfter = m.received();
            }
        }
        if (length <= CHUNK) {
            assertEquals(0, memory.handedOut(), "one heap array from the first segment: nothing of the engine's memory");
        } else {
            assertTrue(arrayAfter >= arrayAt && arrayAfter - SEG < arrayAt, "moved at an eighth: " + arrayAfter);
            assertTrue(length <= 8 * arrayAfter, "the array is at most 8 times what had arrived");
            assertEquals(0, memory.live(), "the chunks from before went back");
        }
        assertEquals(1, m.chunkTableLength());
        ReceivedMessage message = m.toMessage();
        assertEquals(1, message.partCount());
        byte[] taken = message.takeByteArray();
        assertArrayEquals(data, taken);
        taken[length - 1] ^= 1;
        assertEquals(taken[length - 1], message.buffers()[0].get(length - 1), "the array it was assembled in, not a copy");
        assertThrows(IllegalStateException.class, message::takeByteArray, "taken once");
        message.release(); // a no-op after the take
    }

    @Test
    void outOfOrderSegments_beforeAndAfterTheMove_allLandInTheArray() {
        int length = 1_000_000;
        IncomingMessage m = response(length, true);
        byte[] data = random(length, 11);
        CountingPayloadMemory memory = new CountingPayloadMemory();
        assertEquals(CHUNK, writeShuffled(m, data, memory, 13));
        assertTrue(m.complete());
        assertEquals(0, memory.live());
        assertArrayEquals(data, m.toMessage().takeByteArray());
    }

    @Test
    void aNewResponse_whoseFirstSegmentIsAnEighth_startsInItsArray_chargedAsAdmitted() {
        int length = 300_000;
        Rpc rpc = response(length, true).rpc;
        int n = 60_000; // a loopback datagram's worth: more than an eighth
        long admitted = IncomingMessage.footprintOfNew(rpc, length, 0, n);
        IncomingMessage m = new IncomingMessage(rpc, length, 1);
        byte[] data = random(length, 4);
        assertEquals(n, m.write(0, ByteBuffer.wrap(data), 0, n, new CountingPayloadMemory()));
        assertEquals(length, m.allocated);
        assertEquals(admitted, m.footprint());
        assertEquals(IncomingMessage.footprintOfNew(length, 0, n), IncomingMessage.footprintOfNew(null, length, 0, n),
                "a request is charged by its chunks");
    }

    @Test
    void aResponseLongerThanTheCap_goesInChunksOfTheEnginesMemory_andIsCopiedOut() {
        int length = OutgoingPayload.MAX_RESPONSE_ARRAY + 1;
        CountingPayloadMemory memory = new CountingPayloadMemory();
        IncomingMessage m = response(length, true);
        assertEquals(Integer.MAX_VALUE, IncomingMessage.arrayAt(m.rpc, length));
        byte[] data = random(length, 3);
        assertEquals(CHUNK, writeShuffled(m, data, memory, 5), "one chunk for the first segment, not the whole");
        assertEquals((length + CHUNK - 1) / CHUNK, memory.handedOut());
        ReceivedMessage message = m.toMessage();
        assertArrayEquals(data, message.takeByteArray());
        assertEquals(0, memory.live(), "the chunks were given back by the take");
    }

    @Test
    void aResponseNotAskedForAsAnArray_andARequest_goInChunks() {
        CountingPayloadMemory memory = new CountingPayloadMemory();
        IncomingMessage m = response(1_000_000, false);
        assertEquals(CHUNK, writeShuffled(m, random(1_000_000, 1), memory, 2));
        assertEquals(16, memory.handedOut());
        assertEquals(16, m.chunkTableLength());

        Rpc server = new Rpc(5, new Peer(new InetSocketAddress("10.0.0.9", 5000)), false);
        server.responseAsArray = true; // never set on a server RPC; ignored if it were
        assertEquals(Integer.MAX_VALUE, IncomingMessage.arrayAt(server, 1_000_000));
        assertEquals(Integer.MAX_VALUE, IncomingMessage.arrayAt(null, 1_000_000));
    }

    @Test
    void aSegmentThatMostlyOverlaps_doesNotMoveTheResponse_beforeAnEighthIsNew() {
        int length = 1 << 20;
        IncomingMessage m = response(length, true);
        byte[] data = random(length, 8);
        ByteBuffer datagram = ByteBuffer.wrap(data);
        CountingPayloadMemory memory = new CountingPayloadMemory();
        int big = 65_000; // loopback-sized segments
        assertEquals(big, m.write(0, datagram, 0, big, memory));
        // A resent segment overlapping all but one byte: n reaches an eighth, the new bytes do not.
        assertEquals(0, m.footprintGrowthFor(0, big), "a duplicate costs nothing");
        assertEquals(1, m.write(1, datagram, 1, big, memory));
        assertTrue(m.allocated < length, "still in chunks: " + m.allocated);
        assertTrue(length <= 8 * (big + 1) || m.allocated < length);
        // New bytes up to an eighth: now it moves.
        int next = big + 1;
        int n = length / 8 - next;
        assertEquals(n, m.write(next, datagram, next, n, memory));
        assertEquals(length, m.allocated);
        assertTrue(length <= 8 * m.received(), "at most 8 times what arrived");
    }

    @Test
    void aFailedAllocation_partWayThroughASegment_isStillCharged_andReleasedWhole() {
        EngineConfig cfg = EngineConfig.builder().pacerEnabled(false).mtu(65_535).unscheduledBytes(300_000).build();
        EnginePair p = new EnginePair(cfg);
        int[] left = {2}; // two chunks, then the memory fails
        p.a.setPayloadMemory(new PayloadMemory() {
            @Override
            public PayloadBuffer keep(ByteBuffer datagram, int index, int length) {
                return PayloadMemory.HEAP.keep(datagram, index, length);
            }

            @Override
            public PayloadBuffer allocate(int length) {
                if (left[0]-- <= 0) {
                    throw new OutOfMemoryError("test");
                }
                return PayloadMemory.HEAP.allocate(length);
            }
        });
        p.a.startRequest(p.now, p.addrB, ByteBuffer.wrap(new byte[10]));
        p.exchange();
        p.serveFromB(random(1_000_000, 2));
        int[] data = {0};
        // The response's second segment (of about 65,000 bytes) is lost, so its third, which
        // straddles chunks 1 and 2, needs both: the first of them is made, the second fails.
        assertThrows(OutOfMemoryError.class, () -> p.exchange(pkt ->
                !(pkt.from().equals(p.addrB) && pkt.type() == PacketType.DATA && ++data[0] == 2)));
        long charged = p.a.bufferedBytes();
        assertTrue(charged >= 2L * IncomingMessage.CHUNK, "the chunks it did make are charged: " + charged);
        p.a.close();
        assertEquals(0, p.a.bufferedBytes(), "released at its full footprint, nothing left over");
    }

    @Test
    void anAllocationThatFails_marksNothingReceived_soTheSegmentIsAskedForAgain() {
        IncomingMessage m = response(1_000_000, false);
        byte[] data = random(1_000_000, 6);
        PayloadMemory failing = new PayloadMemory() {
            @Override
            public PayloadBuffer keep(ByteBuffer datagram, int index, int length) {
                throw new IllegalStateException("no memory");
            }

            @Override
            public PayloadBuffer allocate(int length) {
                throw new OutOfMemoryError("no memory");
            }
        };
        ByteBuffer datagram = ByteBuffer.wrap(data);
        assertThrows(OutOfMemoryError.class, () -> m.write(0, datagram, 0, SEG, failing));
        assertEquals(0, m.received(), "nothing marked received");
        assertEquals(0, m.allocated);
        assertEquals(SEG, m.write(0, datagram, 0, SEG, new CountingPayloadMemory()), "the same segment, again");
    }

    /** A request read through calls that asks for its response as an array. */
    private static final class ArrayCall implements OutgoingPayload {
        final byte[] bytes;

        ArrayCall(byte[] bytes) {
            this.bytes = bytes;
        }

        @Override
        public int payloadLength() {
            return bytes.length;
        }

        @Override
        public boolean payloadDirect() {
            return false;
        }

        @Override
        public void copyPayload(int offset, ByteBuffer out, int at, int n) {
            out.put(at, bytes, offset, n);
        }

        @Override
        public boolean responseAsArray() {
            return true;
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 100, 200_000, 1_000_000})
    void endToEnd_theResponseArrives_inOneArray_andTheEngineHoldsNothingAfter(int length) {
        EnginePair p = new EnginePair(EnginePair.CFG);
        CountingPayloadMemory clientMemory = new CountingPayloadMemory();
        p.a.setPayloadMemory(clientMemory);
        long id = p.a.startRequest(p.now, p.addrB, new ArrayCall(random(100, 1)), 0, false);
        p.exchange();
        byte[] response = random(length, 9);
        p.serveFromB(response);
        p.exchange();
        assertEquals(1, p.eventsA.size());
        EngineEvent e = p.eventsA.get(0);
        assertEquals(id, e.rpcId());
        assertTrue(e.message().partCount() <= 1);
        if (length > 0) {
            assertEquals(1, e.message().partCount(), "one array (in chunks a 1 MB response had 16 parts)");
        }
        assertArrayEquals(response, e.message().takeByteArray());
        assertEquals(0, clientMemory.live(), "nothing of the engine's memory held");
        assertEquals(0, p.a.bufferedBytes(), "the charge went with the delivery");
        p.advance((EnginePair.CFG.tombstoneTicks + 5) * EnginePair.TICK);
        assertTrue(p.a.isQuiescent(), p.a.describe());
    }

    @Test
    void aResponseAbortedAfterItMovedIntoItsArray_leavesNothingCharged() {
        EnginePair p = new EnginePair(EnginePair.CFG);
        CountingPayloadMemory clientMemory = new CountingPayloadMemory();
        p.a.setPayloadMemory(clientMemory);
        long id = p.a.startRequest(p.now, p.addrB, new ArrayCall(random(100, 1)), 0, false);
        p.exchange();
        int length = 1_000_000;
        p.serveFromB(random(length, 9));
        int[] budget = {length / 4 / 1400}; // about a quarter of the response's DATA, then nothing
        p.exchange(pkt -> !(pkt.from().equals(p.addrB) && pkt.type() == PacketType.DATA) || budget[0]-- > 0);
        assertTrue(p.a.bufferedBytes() >= length, "moved into its array, charged in full: " + p.a.bufferedBytes());
        assertTrue(p.a.abort(p.now, id));
        assertEquals(0, p.a.bufferedBytes());
        assertEquals(0, clientMemory.live());
    }
}
