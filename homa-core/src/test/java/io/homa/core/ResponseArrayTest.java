package io.homa.core;

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
 * {@link OutgoingPayload#MAX_RESPONSE_ARRAY} bytes it is assembled in one heap array of its length,
 * charged in full at its first segment, and {@link ReceivedMessage#takeByteArray()} hands that
 * array over; a longer one, and every other message, goes in 64 KiB chunks of the engine's memory
 * as before.
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
    @ValueSource(ints = {2_000, CHUNK + 1, 1_000_000, OutgoingPayload.MAX_RESPONSE_ARRAY})
    void aResponseAskedForAsAnArray_isOneHeapArrayChargedAtOnce_andHandedOverWithoutACopy(int length) {
        CountingPayloadMemory memory = new CountingPayloadMemory();
        IncomingMessage m = response(length, true);
        Rpc rpc = m.rpc;
        assertEquals(length > CHUNK ? length : CHUNK, IncomingMessage.chunkSize(rpc, length));
        assertEquals(IncomingMessage.BOOKKEEPING + IncomingMessage.SLOT * (1 + IncomingMessage.INITIAL_RANGES) + length,
                IncomingMessage.footprintOfNew(length, 0, SEG, IncomingMessage.chunkSize(rpc, length)),
                "the whole array is charged with the first segment");
        byte[] data = random(length, length);
        assertEquals(length, writeShuffled(m, data, memory, 7));
        assertEquals(0, memory.handedOut(), "nothing from the engine's memory: the array is on the heap");
        assertTrue(m.complete());
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
    void aResponseLongerThanTheCap_goesInChunksOfTheEnginesMemory_andIsCopiedOut() {
        int length = OutgoingPayload.MAX_RESPONSE_ARRAY + 1;
        CountingPayloadMemory memory = new CountingPayloadMemory();
        IncomingMessage m = response(length, true);
        assertEquals(CHUNK, IncomingMessage.chunkSize(m.rpc, length));
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

        Rpc server = new Rpc(5, new Peer(new InetSocketAddress("10.0.0.9", 5000)), false);
        server.responseAsArray = true; // never set on a server RPC; ignored if it were
        assertEquals(CHUNK, IncomingMessage.chunkSize(server, 1_000_000));
        assertEquals(CHUNK, IncomingMessage.chunkSize(null, 1_000_000));
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
        assertArrayEquals(response, e.message().takeByteArray());
        if (length >= 200_000) {
            assertEquals(0, clientMemory.handedOut(), "assembled in its array, not in the engine's memory");
        }
        assertEquals(0, clientMemory.live(), "nothing of the engine's memory held");
        assertEquals(0, p.a.bufferedBytes(), "the charge went with the delivery");
        p.advance((EnginePair.CFG.tombstoneTicks + 5) * EnginePair.TICK);
        assertTrue(p.a.isQuiescent(), p.a.describe());
    }
}
