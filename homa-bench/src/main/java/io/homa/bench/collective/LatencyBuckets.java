package io.homa.bench.collective;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

/**
 * Latencies as counts in fixed buckets (1% wide, 1 us to about 100 s), so that rank processes can
 * add theirs up with the group's own all-reduce (a sum of long arrays of one length) and rank 0
 * can read percentiles of the whole job. Values below 1 us land in the first bucket.
 */
final class LatencyBuckets {
    private static final double WIDTH = Math.log(1.01);
    /** Buckets from 1 us to e^(LENGTH x WIDTH) us: 1,851 covers 100 s. */
    static final int LENGTH = 1_851;

    private LatencyBuckets() {
    }

    /** {@code histogram}'s values (in nanoseconds) as bucket counts. */
    static long[] of(Histogram histogram) {
        long[] counts = new long[LENGTH];
        for (HistogramIterationValue v : histogram.recordedValues()) {
            counts[index(v.getValueIteratedTo())] += v.getCountAtValueIteratedTo();
        }
        return counts;
    }

    /** A histogram (in nanoseconds) whose values are the buckets' lower edges, with their counts. */
    static Histogram toHistogram(long[] counts) {
        if (counts.length != LENGTH) {
            throw new IllegalArgumentException("expected " + LENGTH + " buckets, got " + counts.length);
        }
        Histogram h = new Histogram(3);
        for (int i = 0; i < counts.length; i++) {
            if (counts[i] > 0) {
                h.recordValueWithCount(lowerEdgeNanos(i), counts[i]);
            }
        }
        return h;
    }

    static int index(long nanos) {
        double us = nanos / 1e3;
        if (us <= 1) {
            return 0;
        }
        return (int) Math.min(LENGTH - 1, Math.floor(Math.log(us) / WIDTH));
    }

    static long lowerEdgeNanos(int index) {
        return Math.round(Math.exp(index * WIDTH) * 1e3);
    }
}
