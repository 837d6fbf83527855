package io.homa.core;

import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.PacketType;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The engine's ownership of received payload memory ({@link PayloadMemory}): a message that arrives
 * in one datagram is kept, a longer one takes chunks, and every buffer is released exactly once on
 * every path (delivered and released by the receiver, duplicate, evicted, timed out, aborted,
 * engine closed). {@link CountingPayloadMemory} fails a double release or a read after release.
 */
class ReceiveMemoryTest {
    private static final EngineConfig CFG = EngineConfig.builder().pacerEnabled(false).maxMessageLength(10_000_000).build();
    private static final InetSocketAddress SERVER = new InetSocketAddress("127.0.0.1", 9000);
    private static final InetSocketAddress PEER = new InetSocketAddress("127.0.0.1", 9001);

    private final CountingPayloadMemory memory = new CountingPayloadMemory();

    private HomaEngine engine(EngineConfig cfg) {
        HomaEngine e = new HomaEngine(cfg, 1);
        e.setPayloadMemory(memory);
        return e;
    }

    private static byte[] pattern(int n, int salt) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 7 + salt);
        }
        return b;
    }

    /** A DATA packet with payload bytes {@code [offset, offset + n)} of the message's pattern. */
    private static ByteBuffer data(long senderId, int length, int incoming, int offset, int n) {
        ByteBuffer b = ByteBuffer.allocate(2048);
        PacketEncoder.data(b, senderId, length, incoming, offset, 1, false, 0, 0,
                ByteBuffer.wrap(pattern(offset + n, 3)), offset, n);
        return b.flip();
    }

    /** Sends the unscheduled part of a request of {@code length} from {@code from}. */
    private static void unscheduled(HomaEngine e, InetSocketAddress from, long id, int length) {
        int seg = CFG.segmentPayload();
        int end = Math.min(length, CFG.unscheduledLimit());
        for (int off = 0; off < end; off += seg) {
            e.onDatagram(0, from, data(id, length, end, off, Math.min(seg, end - off)));
        }
    }

    private static void tickUntilTimeout(HomaEngine e) {
        long t = 0;
        for (int i = 0; i <= CFG.timeoutTicks + 1; i++) {
            t += CFG.tickNanos;
            e.onTimer(t);
            while (e.pollTransmit(t, ByteBuffer.allocate(CFG.maxDatagram())) != null) {
                // RESENDs to a silent peer go nowhere
            }
        }
    }

    @Test
    void singleDatagramRequest_keptNotCopied_duplicateKeepsNothing_releasedByReceiver() {
        HomaEngine e = engine(CFG);
        e.onDatagram(0, PEER, data(2, 500, 500, 0, 500));
        e.onDatagram(0, PEER, data(2, 500, 500, 0, 500)); // a duplicate while the request is served
        EngineEvent ev = e.pollEvent();
        assertEquals(EngineEvent.Kind.REQUEST, ev.kind());
        assertNull(e.pollEvent(), "delivered once");
        assertEquals(1, memory.kept);
        assertEquals(0, memory.allocated, "no chunk for a message in one datagram");
        assertEquals(0, e.bufferedBytes(), "a delivered message no longer counts");
        assertArrayEquals(pattern(500, 3), ev.message().toByteArray());
        assertEquals(1, memory.live());
        ev.message().release();
        assertEquals(0, memory.live());
    }

    @Test
    void multiDatagramRequest_chunksHandedOverWithTheMessage() {
        HomaEngine e = engine(CFG);
        unscheduled(e, PEER, 2, 3000);
        EngineEvent ev = e.pollEvent();
        assertEquals(0, memory.kept);
        assertEquals(1, memory.allocated, "one chunk sized from the message");
        assertArrayEquals(pattern(3000, 3), ev.message().toByteArray());
        ev.message().release();
        assertEquals(0, memory.live());
    }

    @Test
    void partialRequests_evictedOrTimedOut_released() {
        // Two partial 10 MB requests take a 64 KiB chunk each; a short one then needs room, and
        // the limit evicts the worse-ranked of the two.
        HomaEngine e = engine(CFG.toBuilder().maxBufferedBytesPerPeer(133_000).build());
        unscheduled(e, PEER, 2, 10_000_000);
        unscheduled(e, PEER, 4, 10_000_000);
        assertEquals(2, memory.live());
        unscheduled(e, PEER, 6, 3000);
        assertEquals(1, e.counter(Counter.MEMORY_EVICTIONS));
        EngineEvent ev = e.pollEvent();
        assertEquals(EngineEvent.Kind.REQUEST, ev.kind());
        assertEquals(2, memory.live(), "the evicted request's chunk came back");
        ev.message().release();
        tickUntilTimeout(e);
        assertEquals(0, e.bufferedBytes(), "the silent peer's request timed out");
        assertEquals(0, memory.live(), "the silent peer's request timed out and its chunk came back");
    }

    @Test
    void clientRpc_abortedWhileReceivingItsResponse_released_singleResponseKept() {
        HomaEngine c = engine(CFG);
        long aborted = c.startRequest(0, SERVER, ByteBuffer.wrap(pattern(100, 1)));
        long whole = c.startRequest(0, SERVER, ByteBuffer.wrap(pattern(100, 2)));
        while (c.pollTransmit(0, ByteBuffer.allocate(CFG.maxDatagram())) != null) {
            // both requests go out
        }
        c.onDatagram(0, SERVER, data(aborted ^ 1, 200_000, 60_000, 0, 1000));
        c.onDatagram(0, SERVER, data(whole ^ 1, 700, 700, 0, 700));
        assertEquals(1, memory.allocated);
        assertEquals(1, memory.kept);
        EngineEvent ev = c.pollEvent();
        assertEquals(EngineEvent.Kind.RESPONSE, ev.kind());
        assertEquals(whole, ev.rpcId());
        assertTrue(c.abort(0, aborted));
        assertEquals(1, memory.live(), "only the delivered response is held");
        ev.message().release();
        assertEquals(0, memory.live());
    }

    @Test
    void clientRpc_restartedAfterRpcUnknown_partialResponseReleased() {
        HomaEngine c = engine(CFG);
        // Idempotent: sent again whatever the server's RPC_UNKNOWN says of its restarts.
        long id = c.startRequest(0, SERVER, ByteBuffer.wrap(pattern(100, 1)), 0, true);
        while (c.pollTransmit(0, ByteBuffer.allocate(CFG.maxDatagram())) != null) {
            // the request goes out
        }
        c.onDatagram(0, SERVER, data(id ^ 1, 200_000, 60_000, 0, 1000));
        assertEquals(1, memory.live());
        ByteBuffer unknown = ByteBuffer.allocate(64);
        PacketEncoder.bare(unknown, PacketType.RPC_UNKNOWN, id ^ 1);
        c.onDatagram(0, SERVER, unknown.flip());
        assertEquals(1, c.counter(Counter.REQUEST_RESTARTS));
        assertEquals(0, memory.live(), "the partial response of the forgotten request came back");
    }

    @Test
    void close_releasesPartialMessagesAndUnpolledEvents() {
        HomaEngine e = engine(CFG);
        unscheduled(e, PEER, 2, 10_000_000);
        e.onDatagram(0, PEER, data(4, 500, 500, 0, 500)); // delivered, never polled
        assertEquals(2, memory.live());
        e.close();
        assertEquals(0, memory.live());
        assertNull(e.pollEvent());
    }
}
