package io.homa.core;

import java.util.Comparator;
import java.util.PriorityQueue;

/**
 * Sender-side SRPT: the outgoing messages that have bytes ready (granted and unsent, or queued
 * for retransmission), shortest remaining first, ties to the older. Only the head is ever sent
 * from, and sending only shrinks its key, so the heap stays ordered without re-insertion.
 */
final class SenderQueue {
    private static final Comparator<OutgoingMessage> SRPT =
            Comparator.<OutgoingMessage>comparingInt(OutgoingMessage::remaining).thenComparingLong(m -> m.seq);
    private static final Comparator<OutgoingMessage> FIFO = Comparator.comparingLong(m -> m.seq);

    private final PriorityQueue<OutgoingMessage> queue;

    SenderQueue(boolean fifo) {
        this.queue = new PriorityQueue<>(fifo ? FIFO : SRPT);
    }

    /** Adds the message if it has something to send and is not queued yet. */
    void offer(OutgoingMessage m) {
        if (!m.queued && m.sendable() && m.rpc.state != Rpc.State.DEAD) {
            m.queued = true;
            queue.add(m);
        }
    }

    /** The message to send from next, dropping entries that have nothing left to send. */
    OutgoingMessage peek() {
        while (true) {
            OutgoingMessage m = queue.peek();
            if (m == null) {
                return null;
            }
            if (m.sendable() && m.rpc.state != Rpc.State.DEAD && m.rpc.out == m) {
                return m;
            }
            queue.poll();
            m.queued = false;
        }
    }

    /** Removes the head (after sending made it unsendable, or to rotate). */
    void pollHead() {
        OutgoingMessage m = queue.poll();
        if (m != null) {
            m.queued = false;
        }
    }

    void remove(OutgoingMessage m) {
        if (m.queued) {
            queue.remove(m);
            m.queued = false;
        }
    }

    boolean isEmpty() {
        return peek() == null;
    }

    int size() {
        return queue.size();
    }
}
