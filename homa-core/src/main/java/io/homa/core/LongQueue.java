package io.homa.core;

import java.util.Arrays;

/**
 * A first-in first-out queue of longs in a growable ring: the ids of owed acks without boxing each
 * one. Not thread-safe.
 */
final class LongQueue {
    private long[] ring;
    private int head;
    private int size;

    LongQueue(int capacity) {
        ring = new long[Math.max(1, capacity)];
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    void add(long v) {
        if (size == ring.length) {
            long[] bigger = new long[ring.length * 2];
            int tail = ring.length - head;
            System.arraycopy(ring, head, bigger, 0, tail);
            System.arraycopy(ring, 0, bigger, tail, head);
            ring = bigger;
            head = 0;
        }
        ring[(head + size) % ring.length] = v;
        size++;
    }

    /** Removes and returns the oldest value; the queue must not be empty. */
    long poll() {
        if (size == 0) {
            throw new IllegalStateException("empty queue");
        }
        long v = ring[head];
        head = (head + 1) % ring.length;
        size--;
        return v;
    }

    @Override
    public String toString() {
        long[] out = new long[size];
        for (int i = 0; i < size; i++) {
            out[i] = ring[(head + i) % ring.length];
        }
        return Arrays.toString(out);
    }
}
