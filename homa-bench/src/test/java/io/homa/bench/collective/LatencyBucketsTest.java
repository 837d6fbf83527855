package io.homa.bench.collective;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Latencies summed across rank processes keep their count and their percentiles to within a bucket (1%). */
class LatencyBucketsTest {
    @Test
    void twoRanksHistograms_summedInBuckets_keepCountAndPercentiles() {
        SplittableRandom random = new SplittableRandom(7);
        Histogram a = new Histogram(3);
        Histogram b = new Histogram(3);
        Histogram both = new Histogram(3);
        for (int i = 0; i < 20_000; i++) {
            long ns = 2_000 + (long) (-Math.log(1 - random.nextDouble()) * 300_000); // 2 us + exponential
            (i % 3 == 0 ? a : b).recordValue(ns);
            both.recordValue(ns);
        }
        long[] sum = LatencyBuckets.of(a);
        long[] other = LatencyBuckets.of(b);
        for (int i = 0; i < sum.length; i++) {
            sum[i] += other[i]; // what the group's all-reduce does
        }
        Histogram merged = LatencyBuckets.toHistogram(sum);
        assertEquals(both.getTotalCount(), merged.getTotalCount());
        for (double p : new double[]{50, 90, 99, 99.9}) {
            double want = both.getValueAtPercentile(p);
            double got = merged.getValueAtPercentile(p);
            assertTrue(got <= want * 1.001 && got >= want / 1.011, "p" + p + ": " + got + " against " + want);
        }
    }

    @Test
    void valuesOutsideTheRange_landInTheEndBuckets() {
        assertEquals(0, LatencyBuckets.index(10));
        assertEquals(LatencyBuckets.LENGTH - 1, LatencyBuckets.index(Long.MAX_VALUE / 2));
        assertThrows(IllegalArgumentException.class, () -> LatencyBuckets.toHistogram(new long[3]));
    }
}
