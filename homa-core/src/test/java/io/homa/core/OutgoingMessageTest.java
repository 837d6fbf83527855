package io.homa.core;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Send-side state of one message: grants, progress and the retransmit queue. */
class OutgoingMessageTest {
    private static final Peer PEER = new Peer(new InetSocketAddress("10.0.0.2", 4000));

    private static OutgoingMessage message(int length, int unscheduledLimit) {
        Rpc rpc = new Rpc(2, PEER, true);
        OutgoingMessage m = new OutgoingMessage(rpc, ByteBuffer.allocate(length), 0, unscheduledLimit);
        rpc.out = m;
        return m;
    }

    /** The queued retransmit ranges in order, draining the queue. */
    private static List<int[]> drain(OutgoingMessage m) {
        List<int[]> out = new ArrayList<>();
        while (m.hasRetransmit()) {
            out.add(new int[]{m.retransmitStart(), m.retransmitEnd(), m.retransmitPriority()});
            m.retransmitted(m.retransmitEnd());
        }
        return out;
    }

    private static void assertRanges(List<int[]> got, int[]... expected) {
        assertEquals(expected.length, got.size(), "number of ranges");
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i][0], got.get(i)[0], "start of range " + i);
            assertEquals(expected[i][1], got.get(i)[1], "end of range " + i);
            if (expected[i].length > 2) {
                assertEquals(expected[i][2], got.get(i)[2], "priority of range " + i);
            }
        }
    }

    // ------------------------------------------------------------------ construction

    @Test
    void new_lengthFromPayloadRemaining() {
        ByteBuffer p = ByteBuffer.allocate(1000);
        p.position(100).limit(900);
        OutgoingMessage m = new OutgoingMessage(new Rpc(2, PEER, true), p, 5, 40_096);
        assertEquals(800, m.length);
        assertEquals(800, m.remaining());
        assertEquals(5, m.seq);
        assertEquals(100, p.position());
    }

    @Test
    void copyPayload_offsetByBufferPosition() {
        ByteBuffer p = ByteBuffer.allocate(1000);
        for (int i = 0; i < 1000; i++) {
            p.put(i, (byte) i);
        }
        p.position(100);
        OutgoingMessage m = new OutgoingMessage(new Rpc(2, PEER, true), p, 0, 40_096);
        ByteBuffer out = ByteBuffer.allocate(20);
        m.copyPayload(out, 4, 500, 10);
        for (int i = 0; i < 10; i++) {
            assertEquals((byte) (600 + i), out.get(4 + i));
        }
        assertEquals(100, p.position());
        assertEquals(0, out.position());
    }

    @Test
    void copyPayload_parts_readAcrossBoundariesInPlace() {
        ByteBuffer a = ByteBuffer.wrap(new byte[]{9, 0, 1, 2}).position(1); // 0 1 2
        ByteBuffer empty = ByteBuffer.allocate(0);
        ByteBuffer b = ByteBuffer.allocateDirect(4).put(0, (byte) 3).put(1, (byte) 4).limit(2); // 3 4
        ByteBuffer c = ByteBuffer.wrap(new byte[]{5, 6, 7});
        ByteBuffer[] parts = {a, empty, b, c};
        int length = OutgoingMessage.lengthOf(parts);
        assertEquals(8, length);
        OutgoingMessage m = new OutgoingMessage(new Rpc(2, PEER, true), a, parts, null, length, 0, 40_096);
        assertEquals(8, m.length);
        for (int offset = 0; offset < 8; offset++) {
            for (int n = 0; offset + n <= 8; n++) {
                ByteBuffer out = ByteBuffer.allocate(8);
                m.copyPayload(out, 0, offset, n);
                for (int i = 0; i < n; i++) {
                    assertEquals(offset + i, out.get(i), "offset " + offset + " n " + n);
                }
            }
        }
        assertEquals(1, a.position());
        assertEquals(2, b.limit());
    }

    @Test
    void lengthOf_noParts_refused() {
        assertThrows(IllegalArgumentException.class, () -> OutgoingMessage.lengthOf(new ByteBuffer[0]));
    }

    @Test
    void new_shortMessage_grantedWhole() {
        OutgoingMessage m = message(10_000, 40_096);
        assertEquals(10_000, m.unscheduledLimit);
        assertEquals(10_000, m.granted);
    }

    @Test
    void new_longMessage_grantedUnscheduledPrefix() {
        OutgoingMessage m = message(1_000_000, 40_096);
        assertEquals(40_096, m.unscheduledLimit);
        assertEquals(40_096, m.granted);
        assertEquals(0, m.sent);
    }

    // ------------------------------------------------------------------ progress

    @Test
    void hasNewData_untilGrantReached() {
        OutgoingMessage m = message(100_000, 40_096);
        assertTrue(m.hasNewData());
        m.sent = 40_000;
        assertTrue(m.hasNewData());
        m.sent = 40_096;
        assertFalse(m.hasNewData());
        assertFalse(m.sendable());
        assertFalse(m.fullySent());
        m.granted = 50_000;
        assertTrue(m.hasNewData());
    }

    @Test
    void fullySent_whenSentReachesLength() {
        OutgoingMessage m = message(5_000, 40_096);
        m.sent = 4_999;
        assertFalse(m.fullySent());
        assertEquals(1, m.remaining());
        m.sent = 5_000;
        assertTrue(m.fullySent());
        assertFalse(m.hasNewData());
        assertEquals(0, m.remaining());
    }

    @Test
    void zeroLength_sendsOneEmptySegment() {
        OutgoingMessage m = message(0, 40_096);
        assertEquals(0, m.granted);
        assertTrue(m.hasNewData());
        assertTrue(m.sendable());
        assertFalse(m.fullySent());
        m.zeroSent = true;
        assertFalse(m.hasNewData());
        assertFalse(m.sendable());
        assertTrue(m.fullySent());
    }

    @Test
    void sendable_retransmitOnly() {
        OutgoingMessage m = message(5_000, 40_096);
        m.sent = 5_000;
        assertFalse(m.sendable());
        m.queueRetransmit(0, 1432, 2);
        assertTrue(m.sendable());
        assertFalse(m.hasNewData());
    }

    // ------------------------------------------------------------------ retransmit queue

    @Test
    void retransmit_emptyOrReversedRange_ignored() {
        OutgoingMessage m = message(5_000, 40_096);
        m.queueRetransmit(100, 100, 1);
        m.queueRetransmit(200, 100, 1);
        assertFalse(m.hasRetransmit());
    }

    @Test
    void retransmit_disjointRanges_keptInArrivalOrder() {
        OutgoingMessage m = message(100_000, 100_000);
        m.queueRetransmit(5000, 6000, 1);
        m.queueRetransmit(0, 1000, 2);
        m.queueRetransmit(9000, 9500, 3);
        assertRanges(drain(m), new int[]{5000, 6000, 1}, new int[]{0, 1000, 2}, new int[]{9000, 9500, 3});
    }

    @Test
    void retransmit_overlappingRange_mergedWithHigherPriority() {
        OutgoingMessage m = message(100_000, 100_000);
        m.queueRetransmit(1000, 3000, 1);
        m.queueRetransmit(2000, 5000, 4);
        assertRanges(drain(m), new int[]{1000, 5000, 4});
    }

    @Test
    void retransmit_overlapAtFront_merged() {
        OutgoingMessage m = message(100_000, 100_000);
        m.queueRetransmit(2000, 5000, 3);
        m.queueRetransmit(1000, 3000, 1);
        assertRanges(drain(m), new int[]{1000, 5000, 3});
    }

    @Test
    void retransmit_touchingRange_merged() {
        OutgoingMessage m = message(100_000, 100_000);
        m.queueRetransmit(0, 1432, 0);
        m.queueRetransmit(1432, 2864, 0);
        assertRanges(drain(m), new int[]{0, 2864, 0});
    }

    @Test
    void retransmit_duplicateRequest_notQueuedTwice() {
        OutgoingMessage m = message(100_000, 100_000);
        m.queueRetransmit(0, 1432, 2);
        m.queueRetransmit(0, 1432, 2);
        m.queueRetransmit(100, 200, 1);
        assertRanges(drain(m), new int[]{0, 1432, 2});
    }

    @Test
    void retransmit_atMostEightRanges_ninthDropped() {
        OutgoingMessage m = message(100_000, 100_000);
        for (int i = 0; i < 9; i++) {
            m.queueRetransmit(10_000 * i, 10_000 * i + 100, 0);
        }
        List<int[]> got = drain(m);
        assertEquals(8, got.size());
        assertEquals(70_000, got.get(7)[0]);
    }

    @Test
    void retransmit_whenFull_overlappingRangeStillMerges() {
        OutgoingMessage m = message(100_000, 100_000);
        for (int i = 0; i < 8; i++) {
            m.queueRetransmit(10_000 * i, 10_000 * i + 100, 0);
        }
        m.queueRetransmit(30_050, 30_500, 5);
        List<int[]> got = drain(m);
        assertEquals(8, got.size());
        int[] merged = got.stream().filter(r -> r[0] == 30_000).findFirst().orElseThrow();
        assertEquals(30_500, merged[1]);
        assertEquals(5, merged[2]);
    }

    @Test
    void retransmitted_partway_advancesStartOfHead() {
        OutgoingMessage m = message(100_000, 100_000);
        m.queueRetransmit(0, 10_000, 2);
        m.retransmitted(1432 * 4);
        assertTrue(m.hasRetransmit());
        assertEquals(5728, m.retransmitStart());
        assertEquals(10_000, m.retransmitEnd());
        assertEquals(2, m.retransmitPriority());
        m.retransmitted(10_000);
        assertFalse(m.hasRetransmit());
    }

    @Test
    void retransmitted_headDone_nextRangeBecomesHead() {
        OutgoingMessage m = message(100_000, 100_000);
        m.queueRetransmit(0, 1000, 1);
        m.queueRetransmit(5000, 6000, 2);
        m.retransmitted(1000);
        assertEquals(5000, m.retransmitStart());
        assertEquals(2, m.retransmitPriority());
    }

    @Test
    void retransmit_ringWrapsAround() {
        OutgoingMessage m = message(1_000_000, 1_000_000);
        for (int i = 0; i < 8; i++) {
            m.queueRetransmit(10_000 * i, 10_000 * i + 100, 0);
        }
        for (int i = 0; i < 5; i++) {
            m.retransmitted(m.retransmitEnd());
        }
        for (int i = 8; i < 13; i++) {
            m.queueRetransmit(10_000 * i, 10_000 * i + 100, 1);
        }
        m.queueRetransmit(900_000, 900_100, 1); // full again: dropped
        List<int[]> got = drain(m);
        assertEquals(8, got.size());
        for (int i = 0; i < 8; i++) {
            assertEquals(10_000 * (i + 5), got.get(i)[0]);
        }
    }

    @Test
    void retransmit_afterDrain_roomForEightAgain() {
        OutgoingMessage m = message(1_000_000, 1_000_000);
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 8; i++) {
                m.queueRetransmit(10_000 * i, 10_000 * i + 10, 0);
            }
            assertEquals(8, drain(m).size());
        }
    }

    @Property(tries = 500)
    void property_retransmitQueue_coversExactlyTheRequestedBytes(
            @ForAll @Size(min = 1, max = 8) List<@IntRange(min = 0, max = 2_000) Integer> starts,
            @ForAll @Size(min = 1, max = 8) List<@IntRange(min = 1, max = 300) Integer> lengths) {
        OutgoingMessage m = message(3_000, 3_000);
        BitSet requested = new BitSet();
        int n = Math.min(starts.size(), lengths.size());
        for (int i = 0; i < n; i++) {
            int s = starts.get(i);
            int e = s + lengths.get(i);
            m.queueRetransmit(s, e, i % 8);
            requested.set(s, e);
        }
        BitSet queued = new BitSet();
        int ranges = 0;
        while (m.hasRetransmit()) {
            assertTrue(m.retransmitStart() < m.retransmitEnd());
            queued.set(m.retransmitStart(), m.retransmitEnd());
            m.retransmitted(m.retransmitEnd());
            ranges++;
        }
        assertEquals(requested, queued);
        assertTrue(ranges <= n);
    }

    // ------------------------------------------------------------------ restart

    @Test
    void restart_forgetsProgressGrantsAndRetransmits() {
        OutgoingMessage m = message(1_000_000, 40_096);
        m.granted = 500_000;
        m.sent = 300_000;
        m.grantPriority = 2;
        m.queueRetransmit(0, 1432, 3);
        m.restart();
        assertEquals(0, m.sent);
        assertEquals(40_096, m.granted);
        assertFalse(m.hasRetransmit());
        assertTrue(m.hasNewData());
        assertEquals(1_000_000, m.remaining());
    }

    @Test
    void restart_zeroLength_sendsEmptySegmentAgain() {
        OutgoingMessage m = message(0, 40_096);
        m.zeroSent = true;
        m.restart();
        assertFalse(m.zeroSent);
        assertTrue(m.sendable());
        assertFalse(m.fullySent());
    }

    @Test
    void restart_retransmitQueueUsableAfterwards() {
        OutgoingMessage m = message(1_000_000, 1_000_000);
        for (int i = 0; i < 8; i++) {
            m.queueRetransmit(10_000 * i, 10_000 * i + 10, 0);
        }
        m.retransmitted(m.retransmitEnd());
        m.restart();
        m.queueRetransmit(500, 600, 7);
        assertRanges(drain(m), new int[]{500, 600, 7});
    }

    @Test
    void retransmit_rangeBridgingTwoQueued_mergesAllThree() {
        OutgoingMessage m = message(100_000, 100_000);
        m.queueRetransmit(0, 1_000, 1);
        m.queueRetransmit(5_000, 6_000, 2);
        m.queueRetransmit(500, 5_500, 0);
        List<int[]> got = drain(m);
        assertEquals(1, got.size(), "one range, no byte sent twice");
        assertEquals(0, got.get(0)[0]);
        assertEquals(6_000, got.get(0)[1]);
        assertEquals(2, got.get(0)[2]);
    }
}
