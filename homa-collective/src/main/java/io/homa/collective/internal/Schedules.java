package io.homa.collective.internal;

/**
 * The collectives' algorithms as schedules of transfers (Gloo's and MPICH's classic forms). Element
 * counts need not divide by the group's size: block {@code i} of {@code L} elements over {@code n}
 * ranks has {@code L / n} elements, one more for the first {@code L % n} blocks.
 */
public final class Schedules {
    private Schedules() {
    }

    public static int blockOffset(int elements, int n, int block) {
        int base = elements / n;
        int extra = elements % n;
        return block * base + Math.min(block, extra);
    }

    public static int blockLength(int elements, int n, int block) {
        return elements / n + (block < elements % n ? 1 : 0);
    }

    private static int mod(int a, int n) {
        return ((a % n) + n) % n;
    }

    /**
     * Ring reduce-scatter: n-1 steps; at step s rank r sends block r-s-1 to r+1 and combines block
     * r-s-2 from r-1; rank r ends with block r fully reduced.
     */
    static void ringReduceScatter(Schedule.Builder b, int n, int r, int elements, int firstStep) {
        int next = mod(r + 1, n);
        int prev = mod(r - 1, n);
        for (int s = 0; s < n - 1; s++) {
            int out = mod(r - s - 1, n);
            int in = mod(r - s - 2, n);
            b.send(firstStep + s, next, blockOffset(elements, n, out), blockLength(elements, n, out));
            b.receive(firstStep + s, prev, blockOffset(elements, n, in), blockLength(elements, n, in), true);
        }
    }

    /** Ring all-gather: n-1 steps; at step t rank r sends block r-t to r+1 and copies block r-t-1 from r-1. */
    static void ringAllGather(Schedule.Builder b, int n, int r, int elements, int firstStep) {
        int next = mod(r + 1, n);
        int prev = mod(r - 1, n);
        for (int t = 0; t < n - 1; t++) {
            int out = mod(r - t, n);
            int in = mod(r - t - 1, n);
            b.send(firstStep + t, next, blockOffset(elements, n, out), blockLength(elements, n, out));
            b.receive(firstStep + t, prev, blockOffset(elements, n, in), blockLength(elements, n, in), false);
        }
    }

    public static Schedule ringAllReduce(int n, int r, int elements, int segmentElements) {
        Schedule.Builder b = new Schedule.Builder(segmentElements);
        ringReduceScatter(b, n, r, elements, 0);
        ringAllGather(b, n, r, elements, n - 1);
        return b.build();
    }

    public static Schedule reduceScatter(int n, int r, int elements, int segmentElements) {
        Schedule.Builder b = new Schedule.Builder(segmentElements);
        ringReduceScatter(b, n, r, elements, 0);
        return b.build();
    }

    public static Schedule allGather(int n, int r, int elements, int segmentElements) {
        Schedule.Builder b = new Schedule.Builder(segmentElements);
        ringAllGather(b, n, r, elements, 0);
        return b.build();
    }

    /**
     * Recursive halving then recursive doubling ({@code n} a power of two): at halving step k rank r
     * and partner r ^ (n >> (k+1)) split their common range, each sends the half the other keeps and
     * combines the half it keeps; the doubling steps send the kept ranges back up, in reverse.
     */
    public static Schedule halvingDoublingAllReduce(int n, int r, int elements, int segmentElements) {
        if (Integer.bitCount(n) != 1) {
            throw new IllegalArgumentException("halving-doubling needs a power-of-two group, not " + n);
        }
        Schedule.Builder b = new Schedule.Builder(segmentElements);
        int rounds = Integer.numberOfTrailingZeros(n);
        int[] keptLo = new int[rounds];
        int[] keptHi = new int[rounds];
        int[] otherLo = new int[rounds];
        int[] otherHi = new int[rounds];
        int lo = 0;
        int hi = elements;
        for (int k = 0; k < rounds; k++) {
            int d = n >> (k + 1);
            int partner = r ^ d;
            int mid = lo + (hi - lo) / 2;
            boolean keepLow = (r & d) == 0;
            keptLo[k] = keepLow ? lo : mid;
            keptHi[k] = keepLow ? mid : hi;
            otherLo[k] = keepLow ? mid : lo;
            otherHi[k] = keepLow ? hi : mid;
            b.send(k, partner, otherLo[k], otherHi[k] - otherLo[k]);
            b.receive(k, partner, keptLo[k], keptHi[k] - keptLo[k], true);
            lo = keptLo[k];
            hi = keptHi[k];
        }
        // The partner of halving step k kept the other half: it sends that back, and gets ours.
        for (int k = rounds - 1, step = rounds; k >= 0; k--, step++) {
            int partner = r ^ (n >> (k + 1));
            b.send(step, partner, keptLo[k], keptHi[k] - keptLo[k]);
            b.receive(step, partner, otherLo[k], otherHi[k] - otherLo[k], false);
        }
        return b.build();
    }

    /**
     * Binomial-tree broadcast from {@code root}, segment by segment (each forwarded as it arrives).
     * With v = rank - root, the parent of v is v minus its highest bit; the edge to a child at
     * distance m is step log2(m) + 1 on both sides (steps order a rank's receive before its sends).
     */
    public static Schedule treeBroadcast(int n, int r, int root, int elements, int segmentElements) {
        Schedule.Builder b = new Schedule.Builder(segmentElements);
        int v = mod(r - root, n);
        if (v != 0) {
            int m = Integer.highestOneBit(v);
            b.receive(Integer.numberOfTrailingZeros(m) + 1, mod(v - m + root, n), 0, elements, false);
        }
        int top = Integer.highestOneBit(Math.max(1, n - 1));
        int low = v == 0 ? 1 : Integer.highestOneBit(v) << 1;
        for (int m = top; m >= low; m >>= 1) { // the largest subtree first
            if (v + m < n) {
                b.send(Integer.numberOfTrailingZeros(m) + 1, mod(v + m + root, n), 0, elements);
            }
        }
        return b.build();
    }

    /** Chain broadcast: the root's segments flow rank to rank, pipelined; the edge from v-1 to v is step v. */
    public static Schedule chainBroadcast(int n, int r, int root, int elements, int segmentElements) {
        Schedule.Builder b = new Schedule.Builder(segmentElements);
        int v = mod(r - root, n);
        if (v != 0) {
            b.receive(v, mod(r - 1, n), 0, elements, false);
        }
        if (v != n - 1) {
            b.send(v + 1, mod(r + 1, n), 0, elements);
        }
        return b.build();
    }

    /** Dissemination barrier: ceil(log2 n) rounds; in round k rank r notifies r + 2^k and hears from r - 2^k. */
    public static Schedule barrier(int n, int r) {
        Schedule.Builder b = new Schedule.Builder(1);
        for (int k = 0, d = 1; d < n; k++, d <<= 1) {
            b.send(k, mod(r + d, n), 0, 0);
            b.receive(k, mod(r - d, n), 0, 0, false);
        }
        return b.build();
    }
}
