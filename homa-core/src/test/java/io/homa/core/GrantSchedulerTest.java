package io.homa.core;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The receiver's grant scheduler in isolation. With the defaults: segment 1,432 B, maxIncoming
 * 400,000 B, 8 messages overcommitted, scheduled levels 0..3.
 */
class GrantSchedulerTest {
    record Grant(IncomingMessage m, int newGranted, int priority) {
    }

    static final class Recorder implements GrantScheduler.Sink {
        final List<Grant> grants = new ArrayList<>();

        @Override
        public void grant(IncomingMessage m, int newGranted, int priority) {
            grants.add(new Grant(m, newGranted, priority));
        }

        List<IncomingMessage> messages() {
            List<IncomingMessage> out = new ArrayList<>();
            for (Grant g : grants) {
                out.add(g.m);
            }
            return out;
        }

        Grant of(IncomingMessage m) {
            Grant found = null;
            for (Grant g : grants) {
                if (g.m == m) {
                    found = g;
                }
            }
            return found;
        }
    }

    private final List<Peer> peers = new ArrayList<>();
    private long nextId = 3;

    private Peer peer(int i) {
        while (peers.size() <= i) {
            peers.add(new Peer(new InetSocketAddress("10.0.0." + (peers.size() + 1), 4000)));
        }
        return peers.get(i);
    }

    /** A server RPC's incoming request: {@code length} bytes, nothing granted or received yet. */
    private IncomingMessage incoming(int peer, int length, long seq) {
        Rpc rpc = new Rpc(nextId, peer(peer), false);
        nextId += 2;
        IncomingMessage m = new IncomingMessage(rpc, length, seq);
        rpc.in = m;
        return m;
    }

    /** Marks {@code [0, bytes)} received, keeping the scheduler's budget as the engine does. */
    private static void receive(GrantScheduler s, IncomingMessage m, int bytes) {
        long before = m.outstanding();
        m.ranges.add(0, bytes);
        s.received(m, before);
    }

    /** Counts {@code bytes} of other messages (granted or unscheduled, still to arrive) against the budget. */
    private void othersOutstanding(GrantScheduler s, int bytes) {
        IncomingMessage others = incoming(7, bytes, Long.MAX_VALUE);
        others.granted = bytes;
        s.track(others);
    }

    private static GrantScheduler scheduler(EngineConfig.Builder b) {
        return new GrantScheduler(b.build());
    }

    private static GrantScheduler scheduler() {
        return new GrantScheduler(EngineConfig.builder().grantFifoFraction(0).build());
    }

    // ------------------------------------------------------------------ add / remove

    @Test
    void add_twice_registeredOnce() {
        GrantScheduler s = scheduler();
        IncomingMessage m = incoming(0, 1_000_000, 0);
        s.add(m);
        s.add(m);
        assertEquals(1, s.size());
        assertTrue(m.grantable);
    }

    @Test
    void add_fullyGrantedMessage_ignored() {
        GrantScheduler s = scheduler();
        IncomingMessage m = incoming(0, 10_000, 0);
        m.granted = 10_000;
        s.add(m);
        assertEquals(0, s.size());
        assertFalse(m.grantable);
    }

    @Test
    void remove_stopsGrants() {
        GrantScheduler s = scheduler();
        IncomingMessage m = incoming(0, 1_000_000, 0);
        s.add(m);
        s.remove(m);
        s.remove(m);
        assertEquals(0, s.size());
        assertFalse(m.grantable);
        Recorder r = new Recorder();
        s.schedule(r);
        assertTrue(r.grants.isEmpty());
    }

    @Test
    void schedule_nothingGrantable_noGrants() {
        Recorder r = new Recorder();
        scheduler().schedule(r);
        assertTrue(r.grants.isEmpty());
    }

    // ------------------------------------------------------------------ window

    @Test
    void window_dynamicWithOneMessage_isHalfOfMaxIncoming() {
        GrantScheduler s = scheduler();
        IncomingMessage m = incoming(0, 1_000_000, 0);
        s.add(m);
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(1, r.grants.size());
        assertEquals(200_000, r.grants.get(0).newGranted());
        assertEquals(200_000, m.granted);
        assertEquals(200_000, s.incoming());
    }

    @Test
    void window_dynamicWithThreeMessages_isQuarterOfMaxIncoming() {
        GrantScheduler s = scheduler();
        for (int i = 0; i < 3; i++) {
            s.add(incoming(i, 1_000_000 + i, i));
        }
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(3, r.grants.size());
        for (Grant g : r.grants) {
            assertEquals(100_000, g.newGranted());
        }
        assertEquals(300_000, s.incoming());
    }

    @Test
    void window_fixed_usedRegardlessOfCount() {
        GrantScheduler s = scheduler(EngineConfig.builder().grantWindow(30_000).grantFifoFraction(0));
        for (int i = 0; i < 5; i++) {
            s.add(incoming(i, 1_000_000, i));
        }
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(5, r.grants.size());
        for (Grant g : r.grants) {
            assertEquals(30_000, g.newGranted());
        }
    }

    @Test
    void window_countsFromReceivedBytes() {
        GrantScheduler s = scheduler(EngineConfig.builder().grantWindow(30_000).grantFifoFraction(0));
        IncomingMessage m = incoming(0, 1_000_000, 0);
        m.granted = 60_000;
        s.track(m);
        receive(s, m, 50_000);
        s.add(m);
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(80_000, r.grants.get(0).newGranted());
        assertEquals(30_000, s.incoming());
    }

    @Test
    void window_alreadyGrantedThatFar_noGrant() {
        GrantScheduler s = scheduler(EngineConfig.builder().grantWindow(30_000).grantFifoFraction(0));
        IncomingMessage m = incoming(0, 1_000_000, 0);
        m.granted = 40_000;
        s.track(m);
        s.add(m);
        Recorder r = new Recorder();
        s.schedule(r);
        assertTrue(r.grants.isEmpty());
        assertEquals(40_000, m.granted);
    }

    @Test
    void grant_cappedByMessageLength_andFinishedMessageLeavesScheduler() {
        GrantScheduler s = scheduler();
        IncomingMessage m = incoming(0, 10_000, 0);
        s.add(m);
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(10_000, r.grants.get(0).newGranted());
        assertEquals(0, s.size());
        assertFalse(m.grantable);
        Recorder again = new Recorder();
        s.schedule(again);
        assertTrue(again.grants.isEmpty());
    }

    // ------------------------------------------------------------------ ranking and priorities

    @Test
    void ranking_fewestRemainingBytesGrantedFirst() {
        GrantScheduler s = scheduler();
        IncomingMessage big = incoming(0, 500_000, 0);
        IncomingMessage small = incoming(1, 100_000, 1);
        IncomingMessage mid = incoming(2, 300_000, 2);
        s.add(big);
        s.add(small);
        s.add(mid);
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(List.of(small, mid, big), r.messages());
    }

    @Test
    void ranking_usesRemainingNotLength() {
        GrantScheduler s = scheduler();
        IncomingMessage longButNearlyDone = incoming(0, 900_000, 0);
        longButNearlyDone.granted = 850_000;
        receive(s, longButNearlyDone, 850_000);
        IncomingMessage shortFresh = incoming(1, 100_000, 1);
        s.add(shortFresh);
        s.add(longButNearlyDone);
        Recorder r = new Recorder();
        s.schedule(r);
        assertSame(longButNearlyDone, r.grants.get(0).m());
        assertEquals(1, r.grants.get(0).priority());
        assertEquals(0, r.grants.get(1).priority());
    }

    @Test
    void ranking_tieGoesToOlderMessage() {
        GrantScheduler s = scheduler();
        IncomingMessage newer = incoming(0, 200_000, 7);
        IncomingMessage older = incoming(1, 200_000, 2);
        s.add(newer);
        s.add(older);
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(List.of(older, newer), r.messages());
        assertTrue(r.of(older).priority() > r.of(newer).priority());
    }

    @Test
    void priorities_topRankedGetsHighestScheduledLevel() {
        GrantScheduler s = scheduler();
        List<IncomingMessage> ms = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            IncomingMessage m = incoming(i, 100_000 * (i + 1), i);
            ms.add(m);
            s.add(m);
        }
        Recorder r = new Recorder();
        s.schedule(r);
        for (int i = 0; i < 4; i++) {
            assertEquals(3 - i, r.of(ms.get(i)).priority(), "rank " + i);
        }
    }

    @Test
    void priorities_moreMessagesThanLevels_lowRanksShareLevelZero() {
        GrantScheduler s = scheduler();
        List<IncomingMessage> ms = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            IncomingMessage m = incoming(i, 100_000 * (i + 1), i);
            ms.add(m);
            s.add(m);
        }
        Recorder r = new Recorder();
        s.schedule(r);
        int[] expected = {3, 2, 1, 0, 0, 0, 0, 0};
        for (int i = 0; i < 8; i++) {
            assertEquals(expected[i], r.of(ms.get(i)).priority(), "rank " + i);
        }
    }

    @Test
    void priorities_shiftDownWhenFewerMessagesActive() {
        GrantScheduler s = scheduler();
        IncomingMessage a = incoming(0, 500_000, 0);
        IncomingMessage b = incoming(1, 600_000, 1);
        s.add(a);
        s.add(b);
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(1, r.of(a).priority());
        assertEquals(0, r.of(b).priority());
        assertEquals(1, a.grantPriority);
    }

    @Test
    void priorities_singleMessage_lowestLevel() {
        GrantScheduler s = scheduler();
        IncomingMessage a = incoming(0, 500_000, 0);
        s.add(a);
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(0, r.of(a).priority());
    }

    @Test
    void priorityFor_defaultFourLevels_table() {
        GrantScheduler s = scheduler();
        assertEquals(0, s.priorityFor(0, 1));
        assertEquals(1, s.priorityFor(0, 2));
        assertEquals(0, s.priorityFor(1, 2));
        assertEquals(2, s.priorityFor(0, 3));
        assertEquals(3, s.priorityFor(0, 4));
        assertEquals(0, s.priorityFor(3, 4));
        assertEquals(3, s.priorityFor(0, 8));
        assertEquals(0, s.priorityFor(4, 8));
        assertEquals(0, s.priorityFor(7, 8));
    }

    @Test
    void priorityFor_sevenScheduledLevels_table() {
        GrantScheduler s = scheduler(EngineConfig.builder().maxScheduledPriority(6).defaultUnscheduledPriority(7));
        assertEquals(6, s.priorityFor(0, 8));
        assertEquals(0, s.priorityFor(6, 8));
        assertEquals(4, s.priorityFor(0, 5));
        assertEquals(0, s.priorityFor(0, 1));
    }

    @Test
    void priorityFor_oneScheduledLevel_alwaysZero() {
        GrantScheduler s = scheduler(EngineConfig.builder().maxScheduledPriority(0));
        for (int n = 1; n <= 8; n++) {
            for (int rank = 0; rank < n; rank++) {
                assertEquals(0, s.priorityFor(rank, n));
            }
        }
    }

    // ------------------------------------------------------------------ overcommit and peers

    @Test
    void overcommit_atMostEightMessagesGranted_theShortest() {
        GrantScheduler s = scheduler();
        List<IncomingMessage> ms = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            IncomingMessage m = incoming(i, 1_000_000 + 1000 * i, i);
            ms.add(m);
            s.add(m);
        }
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(8, r.grants.size());
        assertEquals(ms.subList(0, 8), r.messages());
        assertEquals(0, ms.get(8).granted);
        assertEquals(0, ms.get(9).granted);
        for (Grant g : r.grants) {
            assertEquals(400_000 / 9, g.newGranted());
        }
    }

    @Test
    void overcommit_configuredTwo_grantsTwo() {
        GrantScheduler s = scheduler(EngineConfig.builder().maxOvercommit(2).grantFifoFraction(0));
        for (int i = 0; i < 5; i++) {
            s.add(incoming(i, 1_000_000, i));
        }
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(2, r.grants.size());
        assertEquals(400_000 / 3, r.grants.get(0).newGranted());
    }

    @Test
    void peers_oneMessagePerPeerBeforeASecond() {
        GrantScheduler s = scheduler(EngineConfig.builder().maxOvercommit(4).grantFifoFraction(0));
        IncomingMessage a1 = incoming(0, 10_000, 0);
        IncomingMessage a2 = incoming(0, 11_000, 1);
        IncomingMessage a3 = incoming(0, 12_000, 2);
        IncomingMessage b = incoming(1, 500_000, 3);
        IncomingMessage c = incoming(2, 600_000, 4);
        IncomingMessage d = incoming(3, 700_000, 5);
        IncomingMessage e = incoming(4, 800_000, 6);
        for (IncomingMessage m : List.of(a1, a2, a3, b, c, d, e)) {
            s.add(m);
        }
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(Set.of(a1, b, c, d), new HashSet<>(r.messages()));
        assertEquals(0, a2.granted);
        assertEquals(0, e.granted);
    }

    @Test
    void peers_spareSlotsGoToSecondMessagesInRankOrder() {
        GrantScheduler s = scheduler(EngineConfig.builder().maxOvercommit(4).grantFifoFraction(0));
        IncomingMessage a1 = incoming(0, 100_000, 0);
        IncomingMessage a2 = incoming(0, 110_000, 1);
        IncomingMessage a3 = incoming(0, 120_000, 2);
        IncomingMessage a4 = incoming(0, 130_000, 3);
        IncomingMessage b = incoming(1, 900_000, 4);
        for (IncomingMessage m : List.of(a4, a3, b, a2, a1)) {
            s.add(m);
        }
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(List.of(a1, a2, a3, b), r.messages());
        assertEquals(0, a4.granted);
        // ranks among the active set decide priorities: b is ranked last
        assertEquals(0, r.of(b).priority());
        assertEquals(3, r.of(a1).priority());
    }

    // ------------------------------------------------------------------ budget

    @Test
    void budget_partlyUsed_lastGrantTrimmedToBudget() {
        GrantScheduler s = scheduler(EngineConfig.builder().grantWindow(100_000).grantFifoFraction(0));
        othersOutstanding(s, 350_000); // unscheduled bytes of other messages still to arrive
        IncomingMessage a = incoming(0, 1_000_000, 0);
        s.add(a);
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(50_000, r.grants.get(0).newGranted());
        assertEquals(400_000, s.incoming());
    }

    @Test
    void budget_exhausted_noGrants() {
        GrantScheduler s = scheduler();
        othersOutstanding(s, 400_000);
        s.add(incoming(0, 1_000_000, 0));
        Recorder r = new Recorder();
        s.schedule(r);
        assertTrue(r.grants.isEmpty());
    }

    @Test
    void budget_overcommittedByUnscheduledBytes_noGrants() {
        GrantScheduler s = scheduler();
        othersOutstanding(s, 450_000);
        s.add(incoming(0, 1_000_000, 0));
        Recorder r = new Recorder();
        s.schedule(r);
        assertTrue(r.grants.isEmpty());
        assertEquals(450_000, s.incoming());
    }

    @Test
    void budget_bestRankedTakesFreedBudgetFirst() {
        GrantScheduler s = scheduler(EngineConfig.builder().grantWindow(100_000).grantFifoFraction(0));
        othersOutstanding(s, 380_000);
        IncomingMessage worse = incoming(0, 900_000, 0);
        IncomingMessage better = incoming(1, 200_000, 1);
        s.add(worse);
        s.add(better);
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(1, r.grants.size());
        assertSame(better, r.grants.get(0).m());
        assertEquals(20_000, better.granted);
        assertEquals(0, worse.granted);
    }

    @Test
    void budget_neverExceededOverReceiveAndRegrantRounds() {
        GrantScheduler s = scheduler(EngineConfig.builder().grantFifoFraction(0));
        List<IncomingMessage> ms = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            IncomingMessage m = incoming(i % 5, 300_000 + 20_000 * i, i);
            ms.add(m);
            s.add(m);
        }
        Recorder r = new Recorder();
        for (int round = 0; round < 200; round++) {
            s.schedule(r);
            assertTrue(s.incoming() <= 400_000, "round " + round + ": " + s.incoming());
            for (IncomingMessage m : ms) {
                int upTo = (int) Math.min(m.granted, m.received() + 5_000);
                if (upTo > m.received()) {
                    receive(s, m, upTo);
                }
            }
        }
        for (IncomingMessage m : ms) {
            assertTrue(m.complete(), "message " + m.seq + " got " + m.received() + " of " + m.length);
        }
        assertEquals(0, s.incoming());
    }

    // ------------------------------------------------------------------ tiny increments

    @Test
    void tinyIncrement_belowOneSegment_skipped() {
        GrantScheduler s = scheduler(EngineConfig.builder().grantWindow(100_000).grantFifoFraction(0));
        IncomingMessage m = incoming(0, 1_000_000, 0);
        m.granted = 99_000;
        s.track(m);
        s.add(m);
        Recorder r = new Recorder();
        s.schedule(r);
        assertTrue(r.grants.isEmpty());
        assertEquals(99_000, m.granted);
        assertEquals(1, s.size());
    }

    @Test
    void tinyIncrement_exactlyOneSegment_granted() {
        GrantScheduler s = scheduler(EngineConfig.builder().grantWindow(100_000).grantFifoFraction(0));
        IncomingMessage m = incoming(0, 1_000_000, 0);
        m.granted = 100_000 - 1432;
        s.track(m);
        s.add(m);
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(100_000, r.grants.get(0).newGranted());
    }

    @Test
    void tinyIncrement_thatFinishesMessage_granted() {
        GrantScheduler s = scheduler(EngineConfig.builder().grantWindow(200_000).grantFifoFraction(0));
        IncomingMessage m = incoming(0, 100_500, 0);
        m.granted = 100_000;
        s.track(m);
        s.add(m);
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(100_500, r.grants.get(0).newGranted());
        assertEquals(0, s.size());
    }

    @Test
    void tinyIncrement_limitedByBudget_skippedWhileSenderBusy_othersStillConsidered() {
        GrantScheduler s = scheduler(EngineConfig.builder().grantWindow(100_000).grantFifoFraction(0));
        IncomingMessage big = incoming(0, 60_000, 0);         // remaining 60,000: ranked first
        big.granted = 10_000;                                 // ... with 10,000 B still on their way
        IncomingMessage wouldFinish = incoming(1, 600_000, 1);
        wouldFinish.granted = 599_500;
        wouldFinish.ranges.add(0, 500_000);                   // remaining 100,000
        othersOutstanding(s, 400_000 - 1_000);
        s.add(big);
        s.add(wouldFinish);
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(10_000, big.granted, "a tiny grant is not worth a packet while the sender is busy");
        assertEquals(1, r.grants.size());
        assertSame(wouldFinish, r.grants.get(0).m());
        assertEquals(600_000, wouldFinish.granted);
    }

    @Test
    void tinyIncrement_senderIdle_grantedSoNothingStalls() {
        GrantScheduler s = scheduler(EngineConfig.builder().grantWindow(100_000).grantFifoFraction(0));
        IncomingMessage idle = incoming(0, 50_000, 0);        // nothing granted, nothing outstanding
        othersOutstanding(s, 400_000 - 1_000);
        s.add(idle);
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(1_000, idle.granted, "a sender with nothing granted gets even a small grant");
    }

    @Test
    void windowBelowOneSegment_stillGrantsWholeSegments() {
        EngineConfig cfg = EngineConfig.builder().grantWindow(1_000).grantFifoFraction(0).build();
        GrantScheduler s = new GrantScheduler(cfg);
        IncomingMessage m = incoming(0, 200_000, 0);
        m.granted = 40_000;
        m.ranges.add(0, 40_000);
        s.add(m);
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(40_000 + cfg.segmentPayload(), m.granted, "the window is at least one segment");
    }

    // ------------------------------------------------------------------ batching

    private static final int SEG = 1432;

    @Test
    void batch_defaultEightSegments_noGrantUntilTheWindowCanGrowByEight() {
        GrantScheduler s = scheduler();
        IncomingMessage m = incoming(0, 1_000_000, 0);
        s.add(m);
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(200_000, m.granted, "the first grant goes at once");
        for (int k = 1; k < 8; k++) {
            receive(s, m, k * SEG);
            s.schedule(r);
            assertEquals(1, r.grants.size(), "no grant after " + k + " segments");
        }
        receive(s, m, 8 * SEG);
        s.schedule(r);
        assertEquals(2, r.grants.size());
        assertEquals(8 * SEG + 200_000, m.granted, "the whole batch in one grant");
    }

    @Test
    void batch_oneSegment_grantsAfterEverySegment() {
        GrantScheduler s = scheduler(EngineConfig.builder().grantBatchSegments(1).grantFifoFraction(0));
        IncomingMessage m = incoming(0, 1_000_000, 0);
        s.add(m);
        Recorder r = new Recorder();
        s.schedule(r);
        for (int k = 1; k <= 5; k++) {
            receive(s, m, k * SEG);
            s.schedule(r);
            assertEquals(k + 1, r.grants.size(), "a grant per segment without batching");
            assertEquals(k * SEG + 200_000, m.granted);
        }
    }

    @Test
    void batchFor_eightSegmentsAtMostAQuarterOfTheWindowAtLeastOneSegment() {
        GrantScheduler s = scheduler();
        assertEquals(8 * SEG, s.batchFor(200_000));
        assertEquals(10_000, s.batchFor(40_000));
        assertEquals(SEG, s.batchFor(4_000));
        GrantScheduler sixteen = scheduler(EngineConfig.builder().grantBatchSegments(16));
        assertEquals(16 * SEG, sixteen.batchFor(1_000_000));
        assertEquals(SEG, scheduler(EngineConfig.builder().grantBatchSegments(1)).batchFor(1_000_000));
    }

    @Test
    void batch_smallWindow_batchIsAQuarterOfIt() {
        GrantScheduler s = scheduler(EngineConfig.builder().grantWindow(20_000).grantFifoFraction(0));
        IncomingMessage m = incoming(0, 1_000_000, 0);
        s.add(m);
        Recorder r = new Recorder();
        s.schedule(r);
        receive(s, m, 3 * SEG);                    // 4,296 < 5,000
        s.schedule(r);
        assertEquals(1, r.grants.size());
        receive(s, m, 4 * SEG);                    // 5,728 >= 5,000
        s.schedule(r);
        assertEquals(2, r.grants.size());
        assertEquals(4 * SEG + 20_000, m.granted);
    }

    @Test
    void batch_priorityChange_grantedAtOnce() {
        GrantScheduler s = scheduler(EngineConfig.builder().grantWindow(100_000).grantFifoFraction(0));
        IncomingMessage a = incoming(0, 500_000, 0);
        IncomingMessage b = incoming(1, 600_000, 1);
        s.add(a);
        s.add(b);
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(1, a.grantPriority);
        assertEquals(0, b.grantPriority);
        receive(s, a, 2 * SEG);
        receive(s, b, 2 * SEG);
        s.schedule(r);
        assertEquals(2, r.grants.size(), "two segments are no batch");
        s.add(incoming(2, 700_000, 2));            // ranks below both: their levels rise
        s.schedule(r);
        assertEquals(2, a.grantPriority);
        assertEquals(1, b.grantPriority);
        assertEquals(2 * SEG + 100_000, a.granted, "a priority change goes at once, with the window");
        assertEquals(2 * SEG + 100_000, b.granted);
    }

    record FirstGrant(GrantScheduler s, IncomingMessage m, Recorder r) {
    }

    /** One message of {@code length} bytes, given its first grant with a fixed 100,000-byte window. */
    private FirstGrant firstGrant(int length) {
        GrantScheduler s = scheduler(EngineConfig.builder().grantWindow(100_000).grantFifoFraction(0));
        IncomingMessage m = incoming(0, length, 0);
        s.add(m);
        Recorder r = new Recorder();
        s.schedule(r);
        return new FirstGrant(s, m, r);
    }

    @Test
    void batch_budgetBelowABatch_waitsWhileTheSenderHasGrantedBytes() {
        FirstGrant f = firstGrant(1_000_000);
        GrantScheduler s = f.s();
        IncomingMessage m = f.m();
        Recorder r = f.r();
        receive(s, m, 10 * SEG);                   // the window could grow by 10 segments ...
        othersOutstanding(s, 400_000 - (100_000 - 10 * SEG) - 3_000); // 3,000 bytes of budget left
        s.schedule(r);
        assertEquals(1, r.grants.size(), "... but the budget allows less than a batch");
        assertEquals(100_000, m.granted);
    }

    @Test
    void batch_budgetBelowABatch_senderWithNothingGranted_grantedAtOnce() {
        FirstGrant f = firstGrant(1_000_000);
        GrantScheduler s = f.s();
        IncomingMessage m = f.m();
        Recorder r = f.r();
        receive(s, m, 100_000);                    // everything granted arrived
        othersOutstanding(s, 400_000 - 3_000);
        s.schedule(r);
        assertEquals(2, r.grants.size(), "a sender with nothing granted must not stall");
        assertEquals(103_000, m.granted);
    }

    @Test
    void batch_lastGrant_waitsForABatchThenCarriesTheRest() {
        FirstGrant f = firstGrant(105_000);
        GrantScheduler s = f.s();
        IncomingMessage m = f.m();
        Recorder r = f.r();
        assertEquals(100_000, m.granted);
        receive(s, m, 4 * SEG);                    // the window could grow by 4 segments: past the end
        s.schedule(r);
        assertEquals(1, r.grants.size(), "the rest of the message is no reason to skip the batch");
        assertEquals(100_000, m.granted);
        receive(s, m, 8 * SEG);
        s.schedule(r);
        assertEquals(105_000, m.granted);
        assertFalse(m.grantable);
    }

    @Property(tries = 200)
    void property_oneLongMessage_completesWithAboutOneGrantPerBatch(
            @ForAll @IntRange(min = 50_000, max = 3_000_000) int length,
            @ForAll @IntRange(min = 1, max = 32) int batchSegments,
            @ForAll @IntRange(min = 0, max = 150_000) int grantWindow,
            @ForAll @IntRange(min = 1, max = 12) int segmentsPerRound) {
        EngineConfig cfg = EngineConfig.builder().grantBatchSegments(batchSegments).grantWindow(grantWindow)
                .grantFifoFraction(0).build();
        GrantScheduler s = new GrantScheduler(cfg);
        IncomingMessage m = incoming(0, length, 0);
        m.granted = Math.min(length, cfg.unscheduledLimit());
        s.track(m);
        s.add(m);
        Recorder r = new Recorder();
        s.schedule(r);
        int rounds = 0;
        while (!m.complete()) {
            assertTrue(m.outstanding() > 0, "stalled at " + m.received() + " of " + length);
            int upTo = (int) Math.min(m.granted, m.received() + (long) segmentsPerRound * SEG);
            receive(s, m, upTo);
            s.add(m);
            s.schedule(r);
            assertTrue(++rounds < 10_000);
        }
        long batch = s.batchFor(Math.max(SEG, grantWindow > 0 ? grantWindow : cfg.maxIncoming / 2));
        // every grant takes the window to received + window, and the next waits until at least a
        // batch more has arrived: after the first, at most one grant per batch of bytes
        assertTrue(r.grants.size() <= 2 + length / batch,
                r.grants.size() + " grants for " + length + " bytes in batches of " + batch);
        assertEquals(0, s.incoming());
    }

    // ------------------------------------------------------------------ FIFO share

    @Test
    void fifo_afterEnoughGrantedBytes_oldestGetsOneIncrement() {
        GrantScheduler s = scheduler(EngineConfig.builder().maxOvercommit(1).grantWindow(10_000)
                .grantFifoFraction(500).fifoGrantIncrement(10_000));
        IncomingMessage oldest = incoming(0, 1_000_000, 0);
        IncomingMessage shorter = incoming(1, 500_000, 1);
        s.add(oldest);
        s.add(shorter);
        Recorder r = new Recorder();
        s.schedule(r);                    // 10,000 granted: credit 5,000,000 of 10,000,000
        assertEquals(List.of(shorter), r.messages());
        receive(s, shorter, 10_000);
        s.schedule(r);                    // 20,000 granted in all: the oldest's turn
        assertEquals(List.of(shorter, shorter, oldest), r.messages());
        Grant fifo = r.grants.get(2);
        assertEquals(10_000, fifo.newGranted());
        assertEquals(0, fifo.priority());
        receive(s, shorter, 20_000);
        s.schedule(r);                    // credit starts again from 0
        assertEquals(4, r.grants.size());
    }

    @Test
    void schedule_fifoGrantOrder_oldestFirstWhateverItsLength() {
        GrantScheduler srpt = scheduler(EngineConfig.builder().maxOvercommit(1).grantFifoFraction(0));
        GrantScheduler fifo = scheduler(EngineConfig.builder().maxOvercommit(1).grantFifoFraction(0)
                .fifoGrantOrderForTests(true));
        for (GrantScheduler s : List.of(srpt, fifo)) {
            IncomingMessage older = incoming(0, 5_000_000, 0);
            IncomingMessage shorter = incoming(1, 200_000, 1);
            s.add(older);
            s.add(shorter);
            Recorder r = new Recorder();
            s.schedule(r);
            assertEquals(List.of(s == fifo ? older : shorter), r.messages(), s == fifo ? "FIFO" : "SRPT");
        }
    }

    @Test
    void fifo_defaults_fiftyThousandAfterAMillionGrantedBytes() {
        GrantScheduler s = scheduler(EngineConfig.builder().maxOvercommit(1).grantWindow(100_000));
        IncomingMessage oldest = incoming(0, 5_000_000, 0);
        IncomingMessage shorter = incoming(1, 2_000_000, 1);
        s.add(oldest);
        s.add(shorter);
        Recorder r = new Recorder();
        for (int i = 1; i <= 10; i++) {
            s.schedule(r);
            if (i < 10) {
                assertEquals(0, oldest.granted, "FIFO grant after only " + i * 100_000 + " bytes");
            }
            receive(s, shorter, 100_000 * i);
        }
        assertEquals(50_000, oldest.granted);
        assertEquals(0, r.of(oldest).priority());
    }

    @Test
    void fifo_fractionZero_neverGrantsOldest() {
        GrantScheduler s = scheduler(EngineConfig.builder().maxOvercommit(1).grantWindow(100_000)
                .grantFifoFraction(0).fifoGrantIncrement(1));
        IncomingMessage oldest = incoming(0, 5_000_000, 0);
        IncomingMessage shorter = incoming(1, 2_000_000, 1);
        s.add(oldest);
        s.add(shorter);
        Recorder r = new Recorder();
        for (int i = 1; i <= 20; i++) {
            s.schedule(r);
            receive(s, shorter, 100_000 * i);
        }
        assertEquals(0, oldest.granted);
    }

    @Test
    void fifo_incrementCappedByMessageEnd() {
        GrantScheduler s = scheduler(EngineConfig.builder().maxOvercommit(1).grantWindow(10_000)
                .grantFifoFraction(500).fifoGrantIncrement(10_000));
        IncomingMessage oldest = incoming(0, 600_000, 0);
        oldest.granted = 596_000;
        s.track(oldest);
        IncomingMessage shorter = incoming(1, 500_000, 1);
        s.add(oldest);
        s.add(shorter);
        Recorder r = new Recorder();
        s.schedule(r);
        receive(s, shorter, 10_000);
        receive(s, oldest, 596_000);
        s.schedule(r);
        assertEquals(600_000, oldest.granted);
        assertFalse(oldest.grantable);
    }

    // ------------------------------------------------------------------ properties

    private static List<IncomingMessage> expectedActive(List<IncomingMessage> ms, int limit) {
        List<IncomingMessage> ranked = new ArrayList<>(ms);
        ranked.sort(Comparator.comparingLong(IncomingMessage::remaining).thenComparingLong(m -> m.seq));
        List<IncomingMessage> active = new ArrayList<>();
        Set<Peer> seen = new HashSet<>();
        for (IncomingMessage m : ranked) {
            if (active.size() < limit && seen.add(m.rpc.peer)) {
                active.add(m);
            }
        }
        for (IncomingMessage m : ranked) {
            if (active.size() < limit && !active.contains(m)) {
                active.add(m);
            }
        }
        active.sort(Comparator.comparingLong(IncomingMessage::remaining).thenComparingLong(m -> m.seq));
        return active;
    }

    @Property(tries = 300)
    void property_freshMessages_grantedSetAndPrioritiesFollowRankAndPeerRules(
            @ForAll @Size(min = 1, max = 20) List<@IntRange(min = 1, max = 3_000_000) Integer> lengths,
            @ForAll @Size(min = 1, max = 20) List<@IntRange(min = 0, max = 5) Integer> peerIndex,
            @ForAll @IntRange(min = 1, max = 10) int overcommit) {
        GrantScheduler s = scheduler(EngineConfig.builder().maxOvercommit(overcommit).grantFifoFraction(0));
        List<IncomingMessage> ms = new ArrayList<>();
        for (int i = 0; i < lengths.size(); i++) {
            IncomingMessage m = incoming(peerIndex.get(i % peerIndex.size()), lengths.get(i), i);
            ms.add(m);
            s.add(m);
        }
        List<IncomingMessage> active = expectedActive(ms, overcommit);
        Recorder r = new Recorder();
        s.schedule(r);
        assertEquals(active, r.messages());
        long window = 400_000 / (active.size() + 1);
        for (int i = 0; i < active.size(); i++) {
            Grant g = r.grants.get(i);
            assertEquals(Math.min(g.m().length, window), g.newGranted());
            assertEquals(s.priorityFor(i, active.size()), g.priority());
        }
        assertTrue(s.incoming() <= 400_000);
    }

    @Property(tries = 200)
    void property_randomArrivals_budgetNeverExceededAndAccountingExact(
            @ForAll @Size(min = 1, max = 25) List<@IntRange(min = 1, max = 2_000_000) Integer> lengths,
            @ForAll @IntRange(min = 0, max = 500) int fifoFraction,
            @ForAll @IntRange(min = 0, max = 150_000) int grantWindow,
            @ForAll long seed) {
        EngineConfig cfg = EngineConfig.builder().grantFifoFraction(fifoFraction).fifoGrantIncrement(20_000)
                .grantWindow(grantWindow).build();
        GrantScheduler s = new GrantScheduler(cfg);
        Random rnd = new Random(seed);
        List<IncomingMessage> ms = new ArrayList<>();
        int unsched = cfg.unscheduledLimit();
        for (int i = 0; i < lengths.size(); i++) {
            IncomingMessage m = incoming(rnd.nextInt(6), lengths.get(i), i);
            // the engine admits unscheduled bytes only while they fit
            int blind = Math.min(m.length, unsched);
            if (s.incoming() + blind <= cfg.maxIncoming) {
                m.granted = blind;
                s.track(m);
            }
            ms.add(m);
            s.add(m);
        }
        Recorder r = new Recorder();
        for (int round = 0; round < 400; round++) {
            int before = r.grants.size();
            int[] grantedBefore = new int[ms.size()];
            for (int i = 0; i < ms.size(); i++) {
                grantedBefore[i] = ms.get(i).granted;
            }
            s.schedule(r);
            assertTrue(s.incoming() <= cfg.maxIncoming, "budget exceeded: " + s.incoming());
            long sum = 0;
            for (IncomingMessage m : ms) {
                sum += m.outstanding();
                assertTrue(m.granted <= m.length);
            }
            assertEquals(sum, s.incoming(), "totalIncoming out of step with the messages");
            assertTrue(r.grants.size() - before <= cfg.maxOvercommit + 1, "too many grants in one pass");
            for (int k = before; k < r.grants.size(); k++) {
                Grant g = r.grants.get(k);
                assertTrue(g.priority() >= 0 && g.priority() <= cfg.maxScheduledPriority);
                assertTrue(g.newGranted() > grantedBefore[ms.indexOf(g.m())], "grant did not raise the offset");
            }
            // some granted bytes arrive, in random order of messages
            for (int k = 0; k < 3; k++) {
                IncomingMessage m = ms.get(rnd.nextInt(ms.size()));
                int upTo = (int) Math.min(m.granted, m.received() + 1 + rnd.nextInt(60_000));
                if (upTo > m.received()) {
                    receive(s, m, upTo);
                }
            }
        }
    }
}
