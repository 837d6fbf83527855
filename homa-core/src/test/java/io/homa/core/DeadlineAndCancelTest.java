package io.homa.core;

import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

import static io.homa.core.EnginePair.CFG;
import static io.homa.core.EnginePair.bytes;
import static io.homa.core.EnginePair.encode;
import static org.junit.jupiter.api.Assertions.*;

/**
 * The request's deadline travels in its DATA packets and reaches the server's REQUEST event; a
 * client that gives a call up tells the server with CANCEL (issue 25). Hand-moved packets, no
 * clock but the test's.
 */
class DeadlineAndCancelTest {
    private static final long MS = 1_000_000L;

    @Test
    void deadline_everyRequestPacketCarriesTheTimeLeft_serverEventHasIt() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(5_000), p.now + 5_000 * MS);
        var sent = p.drain(p.a);
        assertTrue(sent.size() >= 2, "a multi-packet request");
        for (EnginePair.Packet packet : sent) {
            assertEquals(PacketType.DATA, packet.type());
            assertEquals(5_000, packet.decoded().deadlineMillis);
        }
        p.now += 7 * MS; // the packets spent 7 ms on the way
        sent.forEach(p::deliver);
        EngineEvent request = p.eventsB.get(0);
        assertEquals(EngineEvent.Kind.REQUEST, request.kind());
        assertEquals(p.now + 5_000 * MS, request.deadline(), "first packet's arrival plus the time left it carried");
    }

    @Test
    void deadline_retransmissionSaysWhatIsLeftThen() {
        EnginePair p = new EnginePair(CFG.toBuilder().maxGsoSegments(1).build());
        long start = p.now;
        p.a.startRequest(p.now, p.addrB, bytes(3_000), start + 2_000 * MS);
        var first = p.drain(p.a);
        p.now += 1_500 * MS;
        // The server got the first packet only and asks for the rest.
        p.deliver(first.get(0));
        byte[] resend = encode(b -> PacketEncoder.resend(b, first.get(0).decoded().senderId ^ 1, 1_432, 1_432, 0));
        p.a.onDatagram(p.now, p.addrB, ByteBuffer.wrap(resend));
        var again = p.drain(p.a);
        assertTrue(again.stream().anyMatch(x -> x.decoded().retransmit && x.decoded().deadlineMillis == 500));
    }

    @Test
    void deadline_noneGiven_orBeyondTheField_isSentAsZero_andTheEventSaysNone() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(100));
        p.a.startRequest(p.now, p.addrB, bytes(100), p.now + (WireFormat.MAX_DEADLINE_MILLIS + 1L) * MS);
        var sent = p.drain(p.a);
        assertEquals(2, sent.size());
        sent.forEach(x -> assertEquals(0, x.decoded().deadlineMillis));
        sent.forEach(p::deliver);
        assertEquals(2, p.eventsB.size());
        p.eventsB.forEach(e -> assertEquals(0, e.deadline()));
    }

    @Test
    void deadline_passedWhileSending_isSentAsOneMillisecond_neverZero() {
        assertEquals(1, OutgoingData.timeLeftMillis(10 * MS, 9 * MS));
        assertEquals(1, OutgoingData.timeLeftMillis(10 * MS, 10 * MS + MS / 2));
        assertEquals(2, OutgoingData.timeLeftMillis(10 * MS, 12 * MS + MS - 1), "rounded down");
        assertEquals(0, OutgoingData.timeLeftMillis(10 * MS, 0));
    }

    @Test
    void responsesCarryNoDeadline() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(100), p.now + 1_000 * MS);
        p.exchange();
        EngineEvent request = p.eventsB.get(0);
        assertTrue(p.b.respond(p.now, request.peer(), request.rpcId(), bytes(3_000)));
        var response = p.drain(p.b);
        assertFalse(response.isEmpty());
        response.forEach(x -> assertEquals(0, x.decoded().deadlineMillis));
    }

    @Test
    void cancel_ofADeliveredRequest_endsTheServerRpc_withAnEvent_andItsResponseIsRefused() {
        EnginePair p = new EnginePair(CFG);
        long id = p.a.startRequest(p.now, p.addrB, bytes(100), p.now + 1_000 * MS);
        p.exchange();
        assertEquals(1, p.b.liveServerRpcs());
        assertTrue(p.a.abort(p.now, id));
        var cancel = p.drain(p.a);
        assertEquals(1, cancel.size());
        assertEquals(PacketType.CANCEL, cancel.get(0).type());
        assertEquals(id, cancel.get(0).decoded().senderId);
        cancel.forEach(p::deliver);
        EngineEvent cancelled = p.eventsB.get(p.eventsB.size() - 1);
        assertEquals(EngineEvent.Kind.CANCELLED, cancelled.kind());
        assertEquals(id, cancelled.rpcId());
        assertEquals(p.addrA, cancelled.peer());
        assertEquals(0, p.b.liveServerRpcs());
        assertEquals(1, p.b.counter(Counter.SERVER_RPCS_CANCELLED));
        assertFalse(p.b.respond(p.now, p.addrA, id, bytes(10)), "the RPC is gone");
    }

    /**
     * The server's handler has the request when the CANCEL comes; a copy of the request's packet
     * that the network duplicated and held back arrives after it: the request must not run again.
     */
    @Test
    void cancel_ofADeliveredRequest_thenALateCopyOfItsPacket_doesNotRunItAgain() {
        EnginePair p = new EnginePair(CFG);
        long id = p.a.startRequest(p.now, p.addrB, bytes(100), p.now + 1_000 * MS);
        var request = p.drain(p.a);
        assertEquals(1, request.size());
        request.forEach(p::deliver);
        assertEquals(1, p.eventsB.stream().filter(e -> e.kind() == EngineEvent.Kind.REQUEST).count());
        p.a.abort(p.now, id);
        p.drain(p.a).forEach(p::deliver);
        assertEquals(0, p.b.liveServerRpcs());
        p.now += 2 * MS;
        request.forEach(p::deliver); // the late copy
        assertEquals(1, p.eventsB.stream().filter(e -> e.kind() == EngineEvent.Kind.REQUEST).count(),
                "the request was delivered once");
        assertEquals(0, p.b.liveServerRpcs());
        assertEquals(1, p.b.counter(Counter.LATE_DUPLICATE_REQUESTS));
    }

    /** Refused as OVERLOADED (never run), a request must not run on a late copy of its packet either. */
    @Test
    void overloadRefusal_thenALateCopyOfTheRequest_doesNotRunIt() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(100), p.now + 1_000 * MS);
        var request = p.drain(p.a);
        request.forEach(p::deliver);
        EngineEvent delivered = p.eventsB.get(p.eventsB.size() - 1);
        assertTrue(p.b.rejectOverloaded(p.now, delivered.peer(), delivered.rpcId()));
        p.now += 2 * MS;
        request.forEach(p::deliver); // the late copy
        assertEquals(1, p.eventsB.stream().filter(e -> e.kind() == EngineEvent.Kind.REQUEST).count(),
                "the client was told it did not run: it must not run now");
        assertEquals(0, p.b.liveServerRpcs());
    }

    @Test
    void cancel_ofARequestStillArriving_freesItWithoutAnEvent() {
        EnginePair p = new EnginePair(CFG.toBuilder().maxGsoSegments(1).build());
        long id = p.a.startRequest(p.now, p.addrB, bytes(100_000));
        var sent = p.drain(p.a);
        p.deliver(sent.get(0));
        assertEquals(1, p.b.liveServerRpcs());
        p.a.abort(p.now, id);
        p.drain(p.a).stream().filter(x -> x.type() == PacketType.CANCEL).forEach(p::deliver);
        assertEquals(0, p.b.liveServerRpcs());
        assertTrue(p.eventsB.stream().noneMatch(e -> e.kind() == EngineEvent.Kind.CANCELLED));
        assertEquals(0, p.b.bufferedBytes(), "its memory is free");
    }

    @Test
    void abort_beforeAnyByteWentOut_sendsNoCancel() {
        EnginePair p = new EnginePair(CFG);
        long id = p.a.startRequest(p.now, p.addrB, bytes(100));
        p.a.abort(p.now, id);
        assertTrue(p.drain(p.a).isEmpty(), "the server never heard of it");
        assertEquals(0, p.a.counter(Counter.PACKETS_SENT_CANCEL));
    }

    @Test
    void cancel_forged_fromAnotherAddressOrWithAServerId_changesNothing() {
        EnginePair p = new EnginePair(CFG);
        long id = p.a.startRequest(p.now, p.addrB, bytes(100));
        p.exchange();
        byte[] cancel = encode(b -> PacketEncoder.bare(b, PacketType.CANCEL, id));
        p.b.onDatagram(p.now, new InetSocketAddress("127.0.0.1", 6666), ByteBuffer.wrap(cancel));
        assertEquals(1, p.b.drops(DropReason.UNKNOWN_RPC), "a third party names no RPC of its own");
        byte[] odd = encode(b -> PacketEncoder.bare(b, PacketType.CANCEL, id ^ 1));
        p.a.onDatagram(p.now, p.addrB, ByteBuffer.wrap(odd));
        assertEquals(1, p.a.drops(DropReason.WRONG_STATE), "only a client cancels");
        assertEquals(1, p.b.liveServerRpcs());
        assertEquals(1, p.a.liveClientRpcs());
    }
}
