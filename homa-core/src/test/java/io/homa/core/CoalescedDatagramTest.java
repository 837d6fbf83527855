package io.homa.core;

import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static io.homa.core.EnginePair.CFG;
import static io.homa.core.EnginePair.bytes;
import static org.junit.jupiter.api.Assertions.*;

/**
 * Datagrams that hold several packets back to back, as UDP GRO hands them over: every segment is
 * as long as the first but the last, each is validated alone, and one bad segment drops only itself.
 */
class CoalescedDatagramTest {
    /** A 40,000-byte request: unscheduled segments of the same size, then a shorter last one. */
    private static final int LENGTH = 40_000;

    private static byte[] concat(List<EnginePair.Packet> packets) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (EnginePair.Packet p : packets) {
            out.writeBytes(p.bytes());
        }
        return out.toByteArray();
    }

    /** The request's DATA packets as A sends them (equal segments, the last may be shorter). */
    private static List<EnginePair.Packet> request(EnginePair p, ByteBuffer payload) {
        p.a.startRequest(p.now, p.addrB, payload);
        List<EnginePair.Packet> data = new ArrayList<>();
        for (EnginePair.Packet q : p.drain(p.a)) {
            if (q.decoded().type == PacketType.DATA) {
                data.add(q);
            }
        }
        assertTrue(data.size() >= 3, "the request takes several segments");
        return data;
    }

    private static void deliverWhole(EnginePair p, byte[] datagram) {
        p.b.onDatagram(p.now, p.addrA, ByteBuffer.wrap(datagram));
    }

    @Test
    void oneMessageInOneDatagram_deliveredWhole() {
        EnginePair p = new EnginePair(CFG);
        ByteBuffer payload = bytes(LENGTH);
        List<EnginePair.Packet> data = request(p, payload);
        int sent = data.size();
        // The unscheduled part in one datagram, the rest (granted later) packet by packet.
        deliverWhole(p, concat(data));
        assertEquals(sent, p.b.counter(Counter.PACKETS_RECEIVED_DATA));
        p.exchange(q -> true);
        assertEquals(1, p.b.counter(Counter.COALESCED_DATAGRAMS));
        assertEquals(0, p.b.counter(Counter.PACKETS_DROPPED));
        assertEquals(1, p.eventsB.size());
        assertArrayEquals(payload.array(), p.eventsB.get(0).message().toByteArray());
    }

    @Test
    void oneDatagram_oneGrantDecision() {
        EnginePair p = new EnginePair(CFG);
        List<EnginePair.Packet> data = request(p, bytes(1_000_000));
        deliverWhole(p, concat(data));
        long grants = p.drain(p.b).stream().filter(q -> q.decoded().type == PacketType.GRANT).count();
        assertEquals(1, grants, "the segments of one datagram are granted together");
    }

    @Test
    void severalMessagesAndRpcs_eachDelivered() {
        EnginePair p = new EnginePair(CFG);
        ByteBuffer one = bytes(LENGTH);
        ByteBuffer two = bytes(LENGTH);
        two.put(0, (byte) 99);
        List<EnginePair.Packet> a = request(p, one);
        List<EnginePair.Packet> b = request(p, two);
        // Full segments of both requests, then the last (shorter) segment of the second.
        List<EnginePair.Packet> batch = new ArrayList<>(a.subList(0, a.size() - 1));
        batch.addAll(b);
        deliverWhole(p, concat(batch));
        p.b.onDatagram(p.now, p.addrA, ByteBuffer.wrap(a.get(a.size() - 1).bytes()));
        assertEquals(a.size() + b.size(), p.b.counter(Counter.PACKETS_RECEIVED_DATA));
        p.exchange(q -> true);
        assertEquals(2, p.eventsB.size());
        assertEquals(0, p.b.counter(Counter.PACKETS_DROPPED));
    }

    @Test
    void missingSegment_messageWaitsForIt() {
        EnginePair p = new EnginePair(CFG);
        ByteBuffer payload = bytes(LENGTH);
        List<EnginePair.Packet> data = request(p, payload);
        List<EnginePair.Packet> without = new ArrayList<>(data);
        EnginePair.Packet missing = without.remove(1);
        deliverWhole(p, concat(without));
        p.collect();
        assertEquals(0, p.eventsB.size(), "incomplete without its second segment");
        p.b.onDatagram(p.now, p.addrA, ByteBuffer.wrap(missing.bytes()));
        p.collect();
        assertEquals(1, p.eventsB.size());
        assertArrayEquals(payload.array(), p.eventsB.get(0).message().toByteArray());
    }

    @Test
    void hostileSegmentInTheMiddle_dropsOnlyItself() {
        EnginePair p = new EnginePair(CFG);
        ByteBuffer payload = bytes(LENGTH);
        List<EnginePair.Packet> data = request(p, payload);
        byte[] datagram = concat(data);
        int stride = data.get(0).bytes().length;
        // The second segment claims an undefined flag: invalid, and its bytes must not be used.
        datagram[stride + WireFormat.DATA_OFF_FLAGS] = (byte) 0x80;
        deliverWhole(p, datagram);
        p.collect();
        assertEquals(1, p.b.drops(DropReason.BAD_FLAGS));
        assertEquals(data.size() - 1, p.b.counter(Counter.PACKETS_RECEIVED_DATA), "the others were taken");
        assertEquals(0, p.eventsB.size());
        p.b.onDatagram(p.now, p.addrA, ByteBuffer.wrap(data.get(1).bytes()));
        p.collect();
        assertArrayEquals(payload.array(), p.eventsB.get(0).message().toByteArray());
    }

    @Test
    void segmentWhoseLengthLies_dropsOnlyItself() {
        EnginePair p = new EnginePair(CFG);
        List<EnginePair.Packet> data = request(p, bytes(LENGTH));
        byte[] datagram = concat(data);
        int stride = data.get(0).bytes().length;
        ByteBuffer.wrap(datagram).putShort(stride + WireFormat.DATA_OFF_SEGMENT_LENGTH, (short) 7);
        deliverWhole(p, datagram);
        assertEquals(1, p.b.drops(DropReason.BAD_LENGTH));
        assertEquals(data.size() - 1, p.b.counter(Counter.PACKETS_RECEIVED_DATA));
    }

    @Test
    void truncatedLastSegment_dropped_restTaken() {
        EnginePair p = new EnginePair(CFG);
        ByteBuffer payload = bytes(LENGTH);
        List<EnginePair.Packet> data = request(p, payload);
        byte[] whole = concat(data);
        byte[] truncated = java.util.Arrays.copyOf(whole, whole.length - 5);
        deliverWhole(p, truncated);
        p.collect();
        assertEquals(1, p.b.drops(DropReason.BAD_LENGTH));
        assertEquals(data.size() - 1, p.b.counter(Counter.PACKETS_RECEIVED_DATA));
        assertEquals(0, p.eventsB.size());
        p.b.onDatagram(p.now, p.addrA, ByteBuffer.wrap(data.get(data.size() - 1).bytes()));
        p.collect();
        assertArrayEquals(payload.array(), p.eventsB.get(0).message().toByteArray());
    }

    @Test
    void garbageFirstPacket_oneDrop() {
        EnginePair p = new EnginePair(CFG);
        List<EnginePair.Packet> data = request(p, bytes(LENGTH));
        byte[] datagram = concat(data);
        datagram[WireFormat.OFF_MAGIC] = 0;
        deliverWhole(p, datagram);
        assertEquals(1, p.b.counter(Counter.PACKETS_DROPPED), "no stride without a first header: one drop");
        assertEquals(0, p.b.counter(Counter.PACKETS_RECEIVED_DATA));
    }

    @Test
    void batch_grantsDecidedOnceAtItsEnd() {
        EnginePair p = new EnginePair(CFG);
        List<EnginePair.Packet> data = request(p, bytes(1_000_000));
        p.b.beginBatch();
        for (EnginePair.Packet q : data) {
            p.b.onDatagram(p.now, p.addrA, ByteBuffer.wrap(q.bytes()));
        }
        p.b.endBatch();
        long grants = p.drain(p.b).stream().filter(q -> q.decoded().type == PacketType.GRANT).count();
        assertEquals(1, grants, "one decision for the batch");
    }

    @Test
    void moreThan128Packets_oneDrop() {
        EnginePair p = new EnginePair(CFG);
        ByteBuffer d = ByteBuffer.allocate(129 * WireFormat.BARE_LENGTH);
        for (int i = 0; i < 129; i++) {
            io.homa.core.wire.PacketEncoder.bare(d, PacketType.BUSY, 2 + 2L * i);
        }
        p.b.onDatagram(p.now, p.addrA, ByteBuffer.wrap(d.array()));
        assertEquals(1, p.b.drops(DropReason.BAD_LENGTH));
        assertEquals(0, p.b.counter(Counter.PACKETS_RECEIVED_BUSY));
        assertEquals(0, p.b.counter(Counter.COALESCED_DATAGRAMS));
    }

    @Test
    void runOfControlPackets_eachTaken() {
        EnginePair p = new EnginePair(CFG);
        ByteBuffer d = ByteBuffer.allocate(3 * WireFormat.GRANT_LENGTH);
        for (int i = 0; i < 3; i++) {
            io.homa.core.wire.PacketEncoder.grant(d, 2 + 2L * i, 10_000, 1);
        }
        p.b.onDatagram(p.now, p.addrA, ByteBuffer.wrap(d.array()));
        assertEquals(3, p.b.counter(Counter.PACKETS_RECEIVED_GRANT), "three GRANTs at a stride of 20");
        assertEquals(1, p.b.counter(Counter.COALESCED_DATAGRAMS));
    }

    @Test
    void littleEndianBuffer_walkedAsNetworkOrder() {
        EnginePair p = new EnginePair(CFG);
        List<EnginePair.Packet> data = request(p, bytes(LENGTH));
        p.b.onDatagram(p.now, p.addrA, ByteBuffer.wrap(concat(data)).order(java.nio.ByteOrder.LITTLE_ENDIAN));
        assertEquals(data.size(), p.b.counter(Counter.PACKETS_RECEIVED_DATA));
        assertEquals(0, p.b.counter(Counter.PACKETS_DROPPED));
    }

    @Test
    void pollTransmitEndsAnOpenBatch() {
        EnginePair p = new EnginePair(CFG);
        List<EnginePair.Packet> data = request(p, bytes(1_000_000));
        p.b.beginBatch();
        p.b.onDatagram(p.now, p.addrA, ByteBuffer.wrap(concat(data)));
        long grants = p.drain(p.b).stream().filter(q -> q.decoded().type == PacketType.GRANT).count();
        assertEquals(1, grants, "the grants of a batch go out even if nobody ends it");
    }
}
