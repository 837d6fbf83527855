package io.homa.bench;

import org.HdrHistogram.Histogram;

/**
 * Percentiles of one run, in microseconds. Latencies are recorded in nanoseconds (three
 * significant digits, up to a minute) and reported in microseconds with sub-microsecond decimals.
 */
public record LatencyStats(long samples, double p50us, double p99us, double p999us, double maxUs, double meanUs) {
    /** Highest latency a histogram tracks: a minute. */
    public static final long HIGHEST_NANOS = 60_000_000_000L;

    /** A histogram for latencies in nanoseconds. */
    public static Histogram newHistogram() {
        return new Histogram(1, HIGHEST_NANOS, 3);
    }

    public static LatencyStats of(Histogram h) {
        if (h.getTotalCount() == 0) {
            return new LatencyStats(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
        }
        return new LatencyStats(h.getTotalCount(),
                us(h.getValueAtPercentile(50)), us(h.getValueAtPercentile(99)), us(h.getValueAtPercentile(99.9)),
                us(h.getMaxValue()), h.getMean() / 1000.0);
    }

    private static double us(long nanos) {
        return nanos / 1000.0;
    }
}
