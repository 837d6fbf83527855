package io.homa.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Messages given as {@link OutgoingPayload}s (read through calls, no view): they arrive whole, go
 * by reference when direct and large, and the listener hears of each one once: when its RPC ends,
 * or at {@link HomaEngine#close()}.
 */
class OutgoingPayloadTest {
    private static final InetSocketAddress SERVER = new InetSocketAddress("127.0.0.1", 4000);

    /** A message in a byte array (or "direct", for the by-reference rule), read only through copyPayload. */
    private static final class ArrayPayload implements OutgoingPayload {
        final byte[] bytes;
        final boolean direct;
        int copies;

        ArrayPayload(int length, long seed, boolean direct) {
            this.bytes = new byte[length];
            new Random(seed).nextBytes(bytes);
            this.direct = direct;
        }

        @Override
        public int payloadLength() {
            return bytes.length;
        }

        @Override
        public boolean payloadDirect() {
            return direct;
        }

        @Override
        public void copyPayload(int offset, ByteBuffer out, int at, int n) {
            copies++;
            int position = out.position();
            out.put(at, bytes, offset, n);
            assertEquals(position, out.position(), "absolute copies only");
        }
    }

    /** Records both kinds of release. */
    private static final class Releases implements PayloadReleaseListener {
        final List<Object> released = new ArrayList<>();

        @Override
        public void released(ByteBuffer payload) {
            released.add(payload);
        }

        @Override
        public void released(OutgoingPayload payload) {
            released.add(payload);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 100, 1433, 40_000, 1_000_000})
    void echo_ofPayloadsReadThroughCalls_arrivesWholeAndIsReleasedOnce(int length) {
        EnginePair p = new EnginePair(EnginePair.CFG);
        Releases ra = new Releases();
        Releases rb = new Releases();
        p.a.setPayloadReleaseListener(ra);
        p.b.setPayloadReleaseListener(rb);
        ArrayPayload request = new ArrayPayload(length, length, false);
        long id = p.a.startRequest(p.now, p.addrB, request, 0, false);
        p.exchange();
        assertEquals(1, p.eventsB.size());
        assertArrayEquals(request.bytes, p.eventsB.get(0).message().toByteArray());
        ArrayPayload response = new ArrayPayload(length / 2, length + 1, false);
        EngineEvent r = p.eventsB.get(0);
        assertTrue(p.b.respond(p.now, r.peer(), r.rpcId(), response));
        p.exchange();
        assertEquals(id, p.eventsA.get(0).rpcId());
        assertArrayEquals(response.bytes, p.eventsA.get(0).message().toByteArray());
        assertEquals(List.of(request), ra.released);
        p.advance((EnginePair.CFG.tombstoneTicks + 5) * EnginePair.TICK);
        assertEquals(List.of(response), rb.released, "the server's, once acknowledged");
        assertTrue(length == 0 || request.copies > 0, "read through copyPayload");
        assertTrue(p.a.isQuiescent(), p.a.describe());
        assertTrue(p.b.isQuiescent(), p.b.describe());
    }

    @Test
    void directAndLarge_goesByReference_namedAsTheSource() {
        EngineConfig cfg = EngineConfig.builder().pacerEnabled(false).mtu(20_028).maxGsoSegments(3)
                .sendPayloadByReference(true).build();
        HomaEngine e = new HomaEngine(cfg, 1);
        ArrayPayload payload = new ArrayPayload(50_000, 1, true);
        e.startRequest(0, SERVER, payload, 0, false);
        Transmit t = e.pollTransmit(0, ByteBuffer.allocate(cfg.maxDatagram() * cfg.maxGsoSegments));
        assertTrue(t.payloadByReference(), t.toString());
        assertSame(payload, t.source());
        assertNull(t.payload());
        assertEquals(0, payload.copies, "by reference: the engine copies nothing");

        HomaEngine heap = new HomaEngine(cfg, 2);
        ArrayPayload onHeap = new ArrayPayload(50_000, 2, false);
        heap.startRequest(0, SERVER, onHeap, 0, false);
        Transmit copied = heap.pollTransmit(0, ByteBuffer.allocate(cfg.maxDatagram() * cfg.maxGsoSegments));
        assertFalse(copied.payloadByReference());
        assertNull(copied.source());
        assertTrue(onHeap.copies > 0);
    }

    @Test
    void close_releasesEveryOutgoingPayloadStillRead() {
        HomaEngine e = new HomaEngine(EnginePair.CFG, 1);
        Releases released = new Releases();
        e.setPayloadReleaseListener(released);
        ArrayPayload a = new ArrayPayload(100_000, 3, false);
        ByteBuffer b = ByteBuffer.wrap(new byte[10]);
        e.startRequest(0, SERVER, a, 0, false);
        e.startRequest(0, SERVER, b);
        e.close();
        assertEquals(2, released.released.size());
        assertTrue(released.released.contains(a));
        assertTrue(released.released.contains(b));
    }
}
