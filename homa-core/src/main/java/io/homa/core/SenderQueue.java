package io.homa.core;

import java.util.Arrays;

/**
 * Sender-side SRPT: the outgoing messages that have bytes ready (granted and unsent, or queued
 * for retransmission), shortest remaining first, ties to the older. Only the head is ever sent
 * from, and sending only shrinks its key, so the heap stays ordered without re-insertion.
 *
 * <p>A binary heap of its own rather than a {@link java.util.PriorityQueue} with a comparator:
 * each entry's key (remaining bytes, then {@link OutgoingMessage#seq}) is kept beside it in
 * primitive arrays, so that sifting touches three arrays and none of the messages it passes
 * (a server answering many short calls at once spent about 5% of its CPU reaching into them).
 * Removing a message that is not the head searches the array (a message still queued when its
 * RPC ends, or one restarting: rare). The head's key is the one that goes stale (sending
 * shrinks it): it is read again before every change to the heap.
 */
final class SenderQueue {
    private static final int INITIAL_CAPACITY = 16;

    private final boolean fifo;
    private OutgoingMessage[] items = new OutgoingMessage[INITIAL_CAPACITY];
    /** Each entry's remaining bytes when it was placed (0 in FIFO mode), the head's refreshed. */
    private int[] remaining = new int[INITIAL_CAPACITY];
    private long[] seqs = new long[INITIAL_CAPACITY];
    private int size;

    SenderQueue(boolean fifo) {
        this.fifo = fifo;
    }

    /** Adds the message if it has something to send and is not queued yet. */
    void offer(OutgoingMessage m) {
        if (!m.queued && m.sendable() && m.rpc.state != Rpc.State.DEAD) {
            m.queued = true;
            refreshHead();
            if (size == items.length) {
                grow();
            }
            siftUp(size++, m, keyOf(m), m.seq);
        }
    }

    /** The message to send from next, dropping entries that have nothing left to send. */
    OutgoingMessage peek() {
        while (size > 0) {
            OutgoingMessage m = items[0];
            if (m.sendable() && m.rpc.state != Rpc.State.DEAD && m.rpc.out == m) {
                return m;
            }
            removeAt(0);
        }
        return null;
    }

    /** Removes the head (after sending made it unsendable, or to rotate). */
    void pollHead() {
        if (size > 0) {
            removeAt(0);
        }
    }

    void remove(OutgoingMessage m) {
        if (!m.queued) {
            return;
        }
        for (int i = 0; i < size; i++) {
            if (items[i] == m) {
                removeAt(i);
                return;
            }
        }
    }

    boolean isEmpty() {
        return peek() == null;
    }

    int size() {
        return size;
    }

    private int keyOf(OutgoingMessage m) {
        return fifo ? 0 : m.remaining();
    }

    /** The head may have sent since it was placed: its key, read again. */
    private void refreshHead() {
        if (size > 0) {
            remaining[0] = keyOf(items[0]);
        }
    }

    private void removeAt(int i) {
        if (i != 0) { // the moved entry may rise to the head's place: compare with its key as it is now
            refreshHead();
        }
        items[i].queued = false;
        int last = --size;
        OutgoingMessage moved = items[last];
        int movedKey = remaining[last];
        long movedSeq = seqs[last];
        items[last] = null;
        if (i == last) {
            return;
        }
        siftDown(i, moved, movedKey, movedSeq);
        if (items[i] == moved) {
            siftUp(i, moved, movedKey, movedSeq);
        }
    }

    private static boolean before(int key, long seq, int otherKey, long otherSeq) {
        return key < otherKey || (key == otherKey && seq < otherSeq);
    }

    private void siftUp(int i, OutgoingMessage m, int key, long seq) {
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (!before(key, seq, remaining[parent], seqs[parent])) {
                break;
            }
            place(i, items[parent], remaining[parent], seqs[parent]);
            i = parent;
        }
        place(i, m, key, seq);
    }

    private void siftDown(int i, OutgoingMessage m, int key, long seq) {
        int half = size >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            int right = child + 1;
            if (right < size && before(remaining[right], seqs[right], remaining[child], seqs[child])) {
                child = right;
            }
            if (!before(remaining[child], seqs[child], key, seq)) {
                break;
            }
            place(i, items[child], remaining[child], seqs[child]);
            i = child;
        }
        place(i, m, key, seq);
    }

    private void place(int i, OutgoingMessage m, int key, long seq) {
        items[i] = m;
        remaining[i] = key;
        seqs[i] = seq;
    }

    private void grow() {
        int n = items.length * 2;
        items = Arrays.copyOf(items, n);
        remaining = Arrays.copyOf(remaining, n);
        seqs = Arrays.copyOf(seqs, n);
    }
}
