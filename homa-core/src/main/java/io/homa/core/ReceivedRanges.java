package io.homa.core;

/**
 * The byte ranges of a message received so far, as sorted disjoint half-open intervals. In the
 * common case (in-order arrival) there is one interval that grows at its end: it is held in two
 * fields, and the arrays are made only when a second interval appears, so a message that arrives
 * in order (every short one) costs no array. The number of intervals is bounded: a segment that
 * would need more is refused, so a peer sending scattered fragments cannot make this grow without
 * limit.
 */
final class ReceivedRanges {
    static final int MAX_INTERVALS = 256;
    /** Room the arrays are made with; also the capacity charged before they exist. */
    private static final int INITIAL_CAPACITY = 4;

    /** The intervals, or null while there is at most one ({@link #onlyStart}, {@link #onlyEnd}). */
    private int[] starts;
    private int[] ends;
    private int onlyStart;
    private int onlyEnd;
    private int count;
    private long total;

    /** Empty again, as new (for a reused message; the arrays go, so its capacity is the initial one). */
    void clear() {
        starts = null;
        ends = null;
        onlyStart = 0;
        onlyEnd = 0;
        count = 0;
        total = 0;
    }

    /** Bytes received (each byte counted once). */
    long total() {
        return total;
    }

    int intervals() {
        return count;
    }

    /**
     * Intervals the arrays have room for (what they cost: 8 bytes each); before they exist, the
     * room they will be made with, so that what a message is charged does not depend on it.
     */
    int capacity() {
        return starts == null ? INITIAL_CAPACITY : starts.length;
    }

    /** By how many intervals one {@link #add} may grow {@link #capacity()} at most. */
    int capacityGrowthBound() {
        int capacity = capacity();
        if (count < capacity || capacity >= MAX_INTERVALS) {
            return 0;
        }
        return Math.min(MAX_INTERVALS, capacity * 2) - capacity;
    }

    /** Bytes from 0 that have all arrived. */
    int contiguous() {
        return count > 0 && start(0) == 0 ? end(0) : 0;
    }

    private int start(int i) {
        return starts == null ? onlyStart : starts[i];
    }

    private int end(int i) {
        return ends == null ? onlyEnd : ends[i];
    }

    /**
     * Records {@code [start, end)}.
     *
     * @return bytes that were new, or -1 if the segment was refused (too many intervals)
     */
    int add(int start, int end) {
        if (start >= end) {
            return 0;
        }
        if (starts == null) {
            if (count == 0 || (start <= onlyEnd && end >= onlyStart)) { // the first, or it merges
                int newStart = count == 0 ? start : Math.min(start, onlyStart);
                int newEnd = count == 0 ? end : Math.max(end, onlyEnd);
                int added = (newEnd - newStart) - (count == 0 ? 0 : onlyEnd - onlyStart);
                onlyStart = newStart;
                onlyEnd = newEnd;
                count = 1;
                total += added;
                return added;
            }
            starts = new int[INITIAL_CAPACITY]; // a second interval: on to the arrays
            ends = new int[INITIAL_CAPACITY];
            starts[0] = onlyStart;
            ends[0] = onlyEnd;
        }
        // Fast path: extends (or lies within) the last interval.
        if (count > 0 && start <= ends[count - 1] && start >= starts[count - 1]) {
            int added = Math.max(0, end - ends[count - 1]);
            if (added > 0) {
                ends[count - 1] = end;
                total += added;
            }
            return added;
        }
        // First interval whose end >= start: the new range merges from there.
        int lo = 0;
        while (lo < count && ends[lo] < start) {
            lo++;
        }
        int hi = lo;
        long covered = 0;
        int newStart = start;
        int newEnd = end;
        while (hi < count && starts[hi] <= end) {
            covered += ends[hi] - starts[hi];
            newStart = Math.min(newStart, starts[hi]);
            newEnd = Math.max(newEnd, ends[hi]);
            hi++;
        }
        int merged = hi - lo;
        if (merged == 0 && count >= MAX_INTERVALS) {
            return -1;
        }
        int added = (int) ((newEnd - newStart) - covered);
        if (merged == 0) {
            ensure(count + 1);
            System.arraycopy(starts, lo, starts, lo + 1, count - lo);
            System.arraycopy(ends, lo, ends, lo + 1, count - lo);
            count++;
        } else if (merged > 1) {
            System.arraycopy(starts, hi, starts, lo + 1, count - hi);
            System.arraycopy(ends, hi, ends, lo + 1, count - hi);
            count -= merged - 1;
        }
        starts[lo] = newStart;
        ends[lo] = newEnd;
        total += added;
        return added;
    }

    /**
     * Whether {@link #add} would refuse {@code [start, end)} (it would make an interval beyond
     * {@link #MAX_INTERVALS}), so that a caller can refuse it before allocating for it.
     */
    boolean refuses(int start, int end) {
        if (start >= end || count < MAX_INTERVALS) {
            return false;
        }
        for (int i = 0; i < count; i++) {
            if (start(i) <= end && end(i) >= start) {
                return false; // it merges
            }
        }
        return true;
    }

    /** How many bytes of {@code [start, end)} have not arrived yet (what {@link #add} would add, unless it refuses). */
    long missing(int start, int end) {
        if (start >= end) {
            return 0;
        }
        long covered = 0;
        for (int i = 0; i < count; i++) {
            covered += Math.max(0, Math.min(end, end(i)) - Math.max(start, start(i)));
        }
        return (end - start) - covered;
    }

    /** Whether every byte of {@code [start, end)} has arrived. */
    boolean contains(int start, int end) {
        for (int i = 0; i < count; i++) {
            if (start(i) <= start && end(i) >= end) {
                return true;
            }
        }
        return start >= end;
    }

    /**
     * Writes up to {@code max} gaps below {@code limit} as pairs (start, end) into {@code out}.
     *
     * @return the number of gaps written
     */
    int gaps(int limit, int[] out, int max) {
        int n = 0;
        int pos = 0;
        for (int i = 0; i < count && n < max && pos < limit; i++) {
            if (start(i) > pos) {
                out[2 * n] = pos;
                out[2 * n + 1] = Math.min(start(i), limit);
                n++;
            }
            pos = end(i);
        }
        if (n < max && pos < limit) {
            out[2 * n] = pos;
            out[2 * n + 1] = limit;
            n++;
        }
        return n;
    }

    private void ensure(int capacity) {
        if (capacity > starts.length) {
            int cap = Math.min(MAX_INTERVALS, Math.max(capacity, starts.length * 2));
            starts = java.util.Arrays.copyOf(starts, cap);
            ends = java.util.Arrays.copyOf(ends, cap);
        }
    }
}
