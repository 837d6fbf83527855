package io.homa.core;

import io.homa.core.wire.DecodedPacket;
import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketDecoder;
import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.PacketType;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static io.homa.core.EnginePair.CFG;
import static io.homa.core.EnginePair.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Response DATA for a client RPC we do not have is answered RPC_UNKNOWN, rationed ({@link StrayResponses}). */
class StrayResponsesTest {
    private static final InetSocketAddress SERVER = new InetSocketAddress("127.0.0.1", 7000);
    private static final InetSocketAddress OTHER = new InetSocketAddress("127.0.0.1", 7001);

    private record Sent(InetSocketAddress to, PacketType type, long senderId) {
    }

    @Test
    void responseDataForAnUnknownRpc_isAnsweredRpcUnknown_andStillDropped() {
        HomaEngine e = new HomaEngine(CFG, 1);
        e.onDatagram(0, SERVER, responseData(0x777L << 1, 0));
        List<Sent> sent = drain(e);
        assertEquals(List.of(new Sent(SERVER, PacketType.RPC_UNKNOWN, 0x777L << 1)), sent,
                "RPC_UNKNOWN names the server's RPC by the client id");
        assertEquals(1, e.drops(DropReason.UNKNOWN_RPC));
    }

    @Test
    void responseDataFromAnotherAddressForALiveRpc_isNotAnswered() {
        HomaEngine e = new HomaEngine(CFG, 1);
        long id = e.startRequest(0, SERVER, bytes(10));
        drain(e);
        e.onDatagram(0, OTHER, responseData(id, 0));
        assertTrue(drain(e).isEmpty(), "the other address learns nothing about our RPC");
        assertEquals(1, e.drops(DropReason.WRONG_PEER));
    }

    @Test
    void aBurstForOneRpc_getsOneAnswer() {
        HomaEngine e = new HomaEngine(CFG, 1);
        for (int i = 0; i < 20; i++) {
            e.onDatagram(0, SERVER, responseData(0x777L << 1, i * 100));
        }
        assertEquals(1, drain(e).size());
        e.onDatagram(CFG.tickNanos, SERVER, responseData(0x777L << 1, 2_000));
        assertEquals(1, drain(e).size(), "asked again a tick later: answered again");
    }

    @Test
    void answersAreRationedPerTickOfTime_evenOnAnIdleEngine() {
        HomaEngine e = new HomaEngine(CFG, 1);
        for (int i = 0; i < 100; i++) {
            e.onDatagram(0, SERVER, responseData((1000L + i) << 1, 0));
        }
        assertEquals(StrayResponses.ANSWERS_PER_TICK, drain(e).size());
        assertEquals(100, e.drops(DropReason.UNKNOWN_RPC), "every one dropped all the same");
        for (int i = 0; i < 100; i++) {
            e.onDatagram(CFG.tickNanos, SERVER, responseData((2000L + i) << 1, 0));
        }
        assertEquals(StrayResponses.ANSWERS_PER_TICK, drain(e).size(), "the next tick has a new ration");
    }

    /** A 100-byte segment at {@code offset} of a 10,000-byte response to our client RPC {@code clientId}. */
    private static ByteBuffer responseData(long clientId, int offset) {
        ByteBuffer b = ByteBuffer.allocate(2_048);
        PacketEncoder.data(b, clientId ^ 1, 10_000, 10_000, offset, 1, false, 0, 0, bytes(100), 0, 100);
        return b.flip();
    }

    private static List<Sent> drain(HomaEngine e) {
        List<Sent> out = new ArrayList<>();
        ByteBuffer tx = ByteBuffer.allocate(CFG.maxDatagram() * CFG.maxGsoSegments);
        DecodedPacket d = new DecodedPacket();
        while (true) {
            tx.clear();
            Transmit t = e.pollTransmit(0, tx);
            if (t == null) {
                return out;
            }
            tx.flip();
            tx.limit(t.segmentSize());
            assertEquals(null, PacketDecoder.decode(tx, CFG.maxMessageLength, d));
            if (d.type != PacketType.DATA) { // the request of a test that starts one is not an answer
                out.add(new Sent(t.destination(), d.type, d.senderId));
            }
        }
    }
}
