package io.homa.core;

import io.homa.core.wire.DecodedPacket;
import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;

import static io.homa.core.EnginePair.CFG;
import static io.homa.core.EnginePair.TICK;
import static io.homa.core.EnginePair.bytes;
import static org.junit.jupiter.api.Assertions.*;

/**
 * A receiver's CUTOFFS say how many unscheduled bytes per message it accepts, and a sender that
 * has heard them sends it no more than that ({@link Priorities}, {@code OutgoingData}).
 */
class UnscheduledAnnouncementTest {
    private static final EngineConfig BIG = CFG.toBuilder().unscheduledBytes(250_000).build();
    private static final int MB = 1_000_000;

    @Test
    void aSenderSetHigherThanItsReceiver_losesTheExcessOfItsFirstMessageOnly() {
        EnginePair p = new EnginePair(BIG, CFG);
        p.a.startRequest(p.now, p.addrB, bytes(MB));
        burstIntoB(p);
        long dropped = p.b.drops(DropReason.BEYOND_GRANT);
        assertTrue(dropped > 0, "sent before B's CUTOFFS: what lies beyond B's limit is dropped (and asked for again)");
        untilRequests(p, 1);
        long resends = p.sent(p.addrB, PacketType.RESEND).size();

        int before = p.sent(p.addrA, PacketType.DATA).size();
        p.a.startRequest(p.now, p.addrB, bytes(MB));
        burstIntoB(p);
        assertEquals(2, requests(p), "the second message arrived whole with no time passing: no RESEND needed");
        assertEquals(dropped, p.b.drops(DropReason.BEYOND_GRANT), "none of its packets lay beyond B's limit");
        assertEquals(resends, p.sent(p.addrB, PacketType.RESEND).size());
        DecodedPacket first = p.sent(p.addrA, PacketType.DATA).get(before).decoded();
        assertEquals(CFG.unscheduledLimit(), first.incoming, "it announced B's unscheduled limit, not A's");
    }

    @Test
    void aReceiverSetHigher_doesNotRaiseWhatItsSenderSends() {
        EnginePair p = new EnginePair(CFG, BIG);
        p.a.startRequest(p.now, p.addrB, bytes(MB));
        p.exchange();
        int before = p.sent(p.addrA, PacketType.DATA).size();
        p.a.startRequest(p.now, p.addrB, bytes(MB));
        p.exchange();
        assertEquals(2, requests(p));
        assertEquals(CFG.unscheduledLimit(), p.sent(p.addrA, PacketType.DATA).get(before).decoded().incoming,
                "the smaller of the two settings");
    }

    @Test
    void bothSetTheSame_everyMessageSendsThatMuch() {
        EnginePair p = new EnginePair(BIG, BIG);
        for (int i = 1; i <= 2; i++) {
            int before = p.sent(p.addrA, PacketType.DATA).size();
            p.a.startRequest(p.now, p.addrB, bytes(MB));
            p.exchange();
            assertEquals(i, requests(p));
            assertEquals(BIG.unscheduledLimit(), p.sent(p.addrA, PacketType.DATA).get(before).decoded().incoming);
        }
        assertEquals(0, p.b.drops(DropReason.BEYOND_GRANT));
    }

    @Test
    void cutoffsThatSayNothing_areAnOlderEngine_sentAtMostThatEnginesDefault() {
        // An engine from before the field writes 0 there (it was reserved) and accepts its own
        // setting, 40,000 by default then.
        List<EnginePair.Packet> sent = firstPacketsAfterCutoffs(BIG, 0, MB);
        assertEquals(4, sent.get(0).priority(), "the CUTOFFS were taken (a 1 MB message's unscheduled level)");
        assertEquals(CFG.unscheduledLimit(), sent.get(0).decoded().incoming, "40,000 in whole segments");
    }

    @Test
    void theLargestValue_meansAtLeastThat_andLimitsNothing() {
        EngineConfig huge = CFG.toBuilder().unscheduledBytes(5_000_000).build();
        assertEquals(huge.unscheduledLimit(), firstPacketsAfterCutoffs(huge, 0xFFFF, 6 * MB).get(0).decoded().incoming);
        int seg = huge.segmentPayload();
        assertEquals((4_194_176 + seg - 1) / seg * seg,
                firstPacketsAfterCutoffs(huge, 0xFFFE, 6 * MB).get(0).decoded().incoming,
                "one unit less: 4,194,176 bytes, rounded up to whole segments");
    }

    /** A's packets for a request of {@code length} sent after B's CUTOFFS said {@code units} (A set to {@code a}). */
    private static List<EnginePair.Packet> firstPacketsAfterCutoffs(EngineConfig a, int units, int length) {
        EnginePair p = new EnginePair(a, CFG);
        p.a.startRequest(p.now, p.addrB, bytes(100)); // A now knows B as a peer
        p.drain(p.a);
        int[] levels = {0, 0, 0, 0, MB, 15_000, 2_800, 200};
        p.a.onDatagram(p.now, p.addrB, ByteBuffer.wrap(EnginePair.encode(b -> PacketEncoder.cutoffs(b, 2, levels, 9, units))));
        p.a.startRequest(p.now, p.addrB, bytes(length));
        return p.drain(p.a);
    }

    @Test
    void cutoffsThatSayLessThanOneSegment_leaveOneSegment() {
        EnginePair p = new EnginePair(CFG, CFG);
        p.a.startRequest(p.now, p.addrB, bytes(100));
        p.drain(p.a);
        p.a.onDatagram(p.now, p.addrB, ByteBuffer.wrap(EnginePair.encode(
                b -> PacketEncoder.cutoffs(b, 2, CFG.unscheduledCutoffs(), 9, 1)))); // 64 bytes
        p.a.startRequest(p.now, p.addrB, bytes(MB));
        assertEquals(CFG.segmentPayload(), p.drain(p.a).get(0).decoded().incoming);
    }

    @Test
    void theAnnouncement_saysTheReceiversLimitRoundedDown() {
        EnginePair p = new EnginePair(CFG, BIG);
        p.a.startRequest(p.now, p.addrB, bytes(100));
        p.exchange();
        DecodedPacket c = p.sent(p.addrB, PacketType.CUTOFFS).get(0).decoded();
        assertEquals(BIG.unscheduledLimit() / WireFormat.UNSCHEDULED_UNIT, c.unscheduledUnits);
        assertTrue(c.unscheduledUnits * WireFormat.UNSCHEDULED_UNIT <= BIG.unscheduledLimit());
    }

    @Test
    void theVersion_followsWhatIsAnnounced_andIsNeverZeroNorTheOldOne() {
        int[] levels = CFG.unscheduledCutoffs();
        int v = Priorities.version(levels, 626);
        assertEquals(v, Priorities.version(levels.clone(), 626), "the same values, the same version");
        assertNotEquals(v, Priorities.version(levels, 3_917), "other unscheduled bytes: a restarted peer is heard");
        int[] other = levels.clone();
        other[7] = 300;
        assertNotEquals(v, Priorities.version(other, 626), "other cutoffs");
        for (int u = 0; u <= 0xFFFF; u++) {
            int w = Priorities.version(levels, u);
            assertTrue(w >= 2 && w <= 0xFFFF, "version " + w + " for " + u);
        }
    }

    /**
     * A's first burst reaches B in one read round, as a shell hands the engine a round's datagrams
     * ({@link HomaEngine#beginBatch()}): B grants once, after all of them, so every packet of the
     * burst is judged against the message's initial grant. Then the rest of the exchange.
     */
    private static void burstIntoB(EnginePair p) {
        List<EnginePair.Packet> burst = p.drain(p.a);
        p.b.beginBatch();
        burst.forEach(p::deliver);
        p.b.endBatch();
        p.exchange();
    }

    private static int requests(EnginePair p) {
        return (int) p.eventsB.stream().filter(e -> e.kind() == EngineEvent.Kind.REQUEST).count();
    }

    /** Moves time a tick at a time (at most 50) until B has handed over {@code n} requests. */
    private static void untilRequests(EnginePair p, int n) {
        for (int i = 0; i < 50 && requests(p) < n; i++) {
            p.advance(TICK);
        }
        assertEquals(n, requests(p), "B got the request");
    }
}
