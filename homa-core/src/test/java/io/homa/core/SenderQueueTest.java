package io.homa.core;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SenderQueueTest {
    private static final Peer PEER = new Peer(new InetSocketAddress("10.0.0.1", 4000));
    private long nextId = 2;

    /** A client RPC whose request of {@code length} bytes is fully granted (nothing sent yet). */
    private OutgoingMessage message(int length, long seq) {
        Rpc rpc = new Rpc(nextId, PEER, true);
        nextId += 2;
        OutgoingMessage m = new OutgoingMessage(rpc, ByteBuffer.allocate(length), seq, Integer.MAX_VALUE);
        rpc.out = m;
        return m;
    }

    private static List<OutgoingMessage> drain(SenderQueue q) {
        List<OutgoingMessage> order = new ArrayList<>();
        for (OutgoingMessage m = q.peek(); m != null; m = q.peek()) {
            order.add(m);
            q.pollHead();
        }
        return order;
    }

    @Test
    void empty_peekNullAndIsEmpty() {
        SenderQueue q = new SenderQueue(false);
        assertNull(q.peek());
        assertTrue(q.isEmpty());
        assertEquals(0, q.size());
        q.pollHead(); // harmless
        assertEquals(0, q.size());
    }

    @Test
    void srpt_fewestRemainingBytesFirst() {
        SenderQueue q = new SenderQueue(false);
        OutgoingMessage big = message(5000, 0);
        OutgoingMessage small = message(100, 1);
        OutgoingMessage mid = message(3000, 2);
        q.offer(big);
        q.offer(small);
        q.offer(mid);
        assertEquals(List.of(small, mid, big), drain(q));
    }

    @Test
    void srpt_remainingNotLength_decidesOrder() {
        SenderQueue q = new SenderQueue(false);
        OutgoingMessage nearlyDone = message(1_000_000, 0);
        nearlyDone.sent = 999_900;
        OutgoingMessage fresh = message(500, 1);
        q.offer(fresh);
        q.offer(nearlyDone);
        assertSame(nearlyDone, q.peek());
    }

    @Test
    void srpt_tieGoesToLowerSeq() {
        SenderQueue q = new SenderQueue(false);
        OutgoingMessage later = message(2000, 9);
        OutgoingMessage earlier = message(2000, 3);
        q.offer(later);
        q.offer(earlier);
        assertEquals(List.of(earlier, later), drain(q));
    }

    @Test
    void fifo_arrivalOrderRegardlessOfSize() {
        SenderQueue q = new SenderQueue(true);
        OutgoingMessage first = message(1_000_000, 1);
        OutgoingMessage second = message(10, 2);
        OutgoingMessage third = message(500, 3);
        q.offer(third);
        q.offer(second);
        q.offer(first);
        assertEquals(List.of(first, second, third), drain(q));
    }

    @Test
    void offer_twice_queuedOnce() {
        SenderQueue q = new SenderQueue(false);
        OutgoingMessage m = message(100, 0);
        q.offer(m);
        q.offer(m);
        assertEquals(1, q.size());
        assertTrue(m.queued);
        assertEquals(List.of(m), drain(q));
    }

    @Test
    void offer_afterPollHead_queuesAgain() {
        SenderQueue q = new SenderQueue(false);
        OutgoingMessage m = message(100, 0);
        q.offer(m);
        q.pollHead();
        assertFalse(m.queued);
        assertTrue(q.isEmpty());
        q.offer(m);
        assertSame(m, q.peek());
    }

    @Test
    void offer_nothingGrantedLeft_notQueued() {
        SenderQueue q = new SenderQueue(false);
        OutgoingMessage m = message(5000, 0);
        m.granted = 2000;
        m.sent = 2000;
        q.offer(m);
        assertEquals(0, q.size());
        assertFalse(m.queued);
    }

    @Test
    void offer_fullySent_notQueued() {
        SenderQueue q = new SenderQueue(false);
        OutgoingMessage m = message(5000, 0);
        m.sent = 5000;
        q.offer(m);
        assertTrue(q.isEmpty());
    }

    @Test
    void offer_deadRpc_notQueued() {
        SenderQueue q = new SenderQueue(false);
        OutgoingMessage m = message(100, 0);
        m.rpc.state = Rpc.State.DEAD;
        q.offer(m);
        assertEquals(0, q.size());
        assertFalse(m.queued);
    }

    @Test
    void offer_retransmitOnly_queued() {
        SenderQueue q = new SenderQueue(false);
        OutgoingMessage m = message(5000, 0);
        m.sent = 5000;
        m.queueRetransmit(0, 1000, 3);
        q.offer(m);
        assertSame(m, q.peek());
    }

    @Test
    void offer_zeroLengthMessage_queuedUntilItsEmptySegmentSent() {
        SenderQueue q = new SenderQueue(false);
        OutgoingMessage m = message(0, 0);
        q.offer(m);
        assertSame(m, q.peek());
        m.zeroSent = true;
        assertNull(q.peek());
        q.offer(m);
        assertEquals(0, q.size());
    }

    @Test
    void offer_zeroLengthRanksFirstInSrpt() {
        SenderQueue q = new SenderQueue(false);
        OutgoingMessage one = message(1, 0);
        OutgoingMessage zero = message(0, 1);
        q.offer(one);
        q.offer(zero);
        assertSame(zero, q.peek());
    }

    @Test
    void peek_skipsAndForgetsEntryThatBecameUnsendable() {
        SenderQueue q = new SenderQueue(false);
        OutgoingMessage a = message(100, 0);
        OutgoingMessage b = message(200, 1);
        q.offer(a);
        q.offer(b);
        a.sent = 100;
        assertSame(b, q.peek());
        assertFalse(a.queued);
        assertEquals(1, q.size());
    }

    @Test
    void peek_skipsEntryWhoseRpcDied() {
        SenderQueue q = new SenderQueue(false);
        OutgoingMessage a = message(100, 0);
        OutgoingMessage b = message(200, 1);
        q.offer(a);
        q.offer(b);
        a.rpc.state = Rpc.State.DEAD;
        assertSame(b, q.peek());
        assertFalse(a.queued);
    }

    @Test
    void peek_skipsMessageNoLongerTheRpcsOutgoing() {
        SenderQueue q = new SenderQueue(false);
        OutgoingMessage a = message(100, 0);
        q.offer(a);
        a.rpc.out = null;
        assertNull(q.peek());
        assertFalse(a.queued);
        assertEquals(0, q.size());
    }

    @Test
    void isEmpty_trueWhenOnlyStaleEntriesRemain() {
        SenderQueue q = new SenderQueue(false);
        OutgoingMessage a = message(100, 0);
        OutgoingMessage b = message(100, 1);
        q.offer(a);
        q.offer(b);
        a.sent = 100;
        b.rpc.state = Rpc.State.DEAD;
        assertEquals(2, q.size());
        assertTrue(q.isEmpty());
        assertEquals(0, q.size());
    }

    @Test
    void remove_queuedMessage_goneAndUnflagged() {
        SenderQueue q = new SenderQueue(false);
        OutgoingMessage a = message(100, 0);
        OutgoingMessage b = message(200, 1);
        OutgoingMessage c = message(300, 2);
        q.offer(a);
        q.offer(b);
        q.offer(c);
        q.remove(b);
        assertFalse(b.queued);
        assertEquals(2, q.size());
        assertEquals(List.of(a, c), drain(q));
    }

    @Test
    void remove_notQueued_noEffect() {
        SenderQueue q = new SenderQueue(false);
        OutgoingMessage a = message(100, 0);
        OutgoingMessage b = message(200, 1);
        q.offer(a);
        q.remove(b);
        assertEquals(1, q.size());
        assertTrue(a.queued);
    }

    @Test
    void remove_thenOffer_requeues() {
        SenderQueue q = new SenderQueue(false);
        OutgoingMessage a = message(100, 0);
        q.offer(a);
        q.remove(a);
        assertTrue(q.isEmpty());
        q.offer(a);
        assertSame(a, q.peek());
    }

    @Test
    void sendingFromHead_keepsItAtHead() {
        SenderQueue q = new SenderQueue(false);
        OutgoingMessage a = message(3000, 0);
        OutgoingMessage b = message(4000, 1);
        q.offer(a);
        q.offer(b);
        a.sent = 1432;
        assertSame(a, q.peek());
        a.sent = 2864;
        assertSame(a, q.peek());
    }

    @Test
    void pollHead_rotatesToNext() {
        SenderQueue q = new SenderQueue(false);
        OutgoingMessage a = message(100, 0);
        OutgoingMessage b = message(200, 1);
        q.offer(a);
        q.offer(b);
        q.pollHead();
        assertFalse(a.queued);
        assertSame(b, q.peek());
    }

    @Property(tries = 300)
    void property_srptDrainOrderMatchesSortedModel(
            @ForAll @Size(min = 1, max = 60) List<@IntRange(min = 0, max = 200_000) Integer> lengths,
            @ForAll @Size(min = 1, max = 60) List<@IntRange(min = 0, max = 100) Integer> sentPercent,
            @ForAll boolean fifo) {
        SenderQueue q = new SenderQueue(fifo);
        List<OutgoingMessage> all = new ArrayList<>();
        for (int i = 0; i < lengths.size(); i++) {
            // seq deliberately not in offer order
            OutgoingMessage m = message(lengths.get(i), (i * 7919L) % 1000);
            m.sent = (int) ((long) m.length * sentPercent.get(i % sentPercent.size()) / 100);
            all.add(m);
            q.offer(m);
            q.offer(m);
        }
        List<OutgoingMessage> expected = new ArrayList<>();
        for (OutgoingMessage m : all) {
            if (m.sendable()) {
                expected.add(m);
            }
        }
        Comparator<OutgoingMessage> order = fifo
                ? Comparator.comparingLong(m -> m.seq)
                : Comparator.<OutgoingMessage>comparingInt(OutgoingMessage::remaining).thenComparingLong(m -> m.seq);
        expected.sort(order);
        List<OutgoingMessage> got = drain(q);
        for (int i = 0; i < expected.size(); i++) {
            assertEquals(order.compare(expected.get(i), got.get(i)), 0, "position " + i);
        }
        assertEquals(expected.size(), got.size());
    }

    /**
     * Random offers, removals, rotations and sends from the head (the one change of a key the
     * engine makes) against a model: the head is always the first sendable queued message in
     * SRPT (or FIFO) order, as if the whole queue were sorted again after every step.
     */
    @Property(tries = 300)
    void property_headMatchesModelThroughOffersRemovalsAndSends(
            @ForAll @Size(min = 1, max = 200) List<@IntRange(min = 0, max = 3) Integer> ops,
            @ForAll @Size(min = 1, max = 200) List<@IntRange(min = 0, max = 19) Integer> picks,
            @ForAll @Size(min = 20, max = 20) List<@IntRange(min = 0, max = 6) Integer> sizes,
            @ForAll boolean fifo) {
        SenderQueue q = new SenderQueue(fifo);
        List<OutgoingMessage> pool = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            // Few distinct lengths: ties on remaining bytes, broken by seq (not in pool order).
            pool.add(message(sizes.get(i) * 1000, (i * 7L) % 20));
        }
        Comparator<OutgoingMessage> order = fifo
                ? Comparator.comparingLong(m -> m.seq)
                : Comparator.<OutgoingMessage>comparingInt(OutgoingMessage::remaining).thenComparingLong(m -> m.seq);
        java.util.Set<OutgoingMessage> queued = new java.util.HashSet<>();
        for (int step = 0; step < ops.size(); step++) {
            OutgoingMessage pick = pool.get(picks.get(step % picks.size()));
            switch (ops.get(step)) {
                case 0 -> {
                    q.offer(pick);
                    if (pick.sendable()) {
                        queued.add(pick);
                    }
                }
                case 1 -> {
                    OutgoingMessage head = q.peek();
                    q.pollHead();
                    queued.remove(head);
                }
                case 2 -> {
                    q.remove(pick);
                    queued.remove(pick);
                }
                default -> {
                    OutgoingMessage head = q.peek();
                    if (head != null) {
                        head.sent = Math.min(head.length, head.sent + 700);
                    }
                }
            }
            queued.removeIf(m -> !m.sendable());
            OutgoingMessage expected = queued.stream().min(order).orElse(null);
            OutgoingMessage got = q.peek();
            if (expected == null) {
                assertNull(got, "step " + step);
            } else {
                assertEquals(0, order.compare(expected, got), "step " + step);
                assertTrue(queued.contains(got), "step " + step);
            }
        }
    }
}
