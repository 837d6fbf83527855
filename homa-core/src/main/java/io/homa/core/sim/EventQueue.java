package io.homa.core.sim;

import java.util.Arrays;

/**
 * The datacenter simulator's agenda: a binary heap of events kept in parallel primitive arrays
 * (time, insertion sequence, kind and two int arguments), so that scheduling an event allocates
 * nothing once the arrays have grown. Events at the same time run in insertion order, which keeps
 * a run deterministic.
 */
final class EventQueue {
    private long[] time = new long[1024];
    private long[] seq = new long[1024];
    private int[] kind = new int[1024];
    private int[] argA = new int[1024];
    private int[] argB = new int[1024];
    private int size;
    private long nextSeq;

    /** Filled by {@link #poll()}: the event just taken. */
    long polledTime;
    int polledKind;
    int polledA;
    int polledB;

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** Time of the earliest event; only when not empty. */
    long peekTime() {
        return time[0];
    }

    void add(long t, int k, int a, int b) {
        if (size == time.length) {
            int n = size * 2;
            time = Arrays.copyOf(time, n);
            seq = Arrays.copyOf(seq, n);
            kind = Arrays.copyOf(kind, n);
            argA = Arrays.copyOf(argA, n);
            argB = Arrays.copyOf(argB, n);
        }
        long s = nextSeq++;
        int i = size++;
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (!before(t, s, time[parent], seq[parent])) {
                break;
            }
            move(parent, i);
            i = parent;
        }
        set(i, t, s, k, a, b);
    }

    /** Removes the earliest event into the {@code polled*} fields; only when not empty. */
    void poll() {
        polledTime = time[0];
        polledKind = kind[0];
        polledA = argA[0];
        polledB = argB[0];
        int last = --size;
        if (last == 0) {
            return;
        }
        long t = time[last];
        long s = seq[last];
        int k = kind[last];
        int a = argA[last];
        int b = argB[last];
        int i = 0;
        while (true) {
            int child = 2 * i + 1;
            if (child >= last) {
                break;
            }
            if (child + 1 < last && before(time[child + 1], seq[child + 1], time[child], seq[child])) {
                child++;
            }
            if (!before(time[child], seq[child], t, s)) {
                break;
            }
            move(child, i);
            i = child;
        }
        set(i, t, s, k, a, b);
    }

    private static boolean before(long t1, long s1, long t2, long s2) {
        return t1 < t2 || (t1 == t2 && s1 < s2);
    }

    private void move(int from, int to) {
        time[to] = time[from];
        seq[to] = seq[from];
        kind[to] = kind[from];
        argA[to] = argA[from];
        argB[to] = argB[from];
    }

    private void set(int i, long t, long s, int k, int a, int b) {
        time[i] = t;
        seq[i] = s;
        kind[i] = k;
        argA[i] = a;
        argB[i] = b;
    }
}
