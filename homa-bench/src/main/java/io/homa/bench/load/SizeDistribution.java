package io.homa.bench.load;

import io.homa.core.sim.Workload;

import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;

/**
 * The request sizes of a load run: one of the papers' workloads W1..W5 or a fixed size, optionally
 * truncated at a cap, with its size buckets (deciles by message count: bucket 1 holds the shortest
 * 10% of messages, the papers' "short messages"), its mean and the CDF position of each bucket.
 */
public final class SizeDistribution {
    /** Requests carry the wanted response length in their first 4 bytes, so none is shorter. */
    public static final int MIN_REQUEST = 4;
    private static final int PROBE_SAMPLES = 1_000_000;

    private final String name;
    private final Workload workload; // null for a fixed size
    private final int fixed;
    private final int truncate;
    private final int[] bucketMax;
    private final double[] bucketCdf;
    private final double mean;
    /** Mean message size with headers on the wire. */
    private final double meanWire;
    private final int smallest;

    private SizeDistribution(String name, Workload workload, int fixed, int truncate) {
        this.name = name;
        this.workload = workload;
        this.fixed = fixed;
        this.truncate = truncate;
        bucketMax = new int[10];
        for (int k = 1; k <= 10; k++) {
            bucketMax[k - 1] = workload == null ? fixed : cap(workload.quantile(k / 10.0));
        }
        bucketMax[9] = Math.max(bucketMax[9], workload == null ? fixed : cap(workload.maxLength()));
        // Mean and the real CDF at each bucket's upper bound, by sampling with a fixed seed.
        SplittableRandom r = new SplittableRandom(12345);
        long[] atOrBelow = new long[10];
        double sum = 0;
        double wireSum = 0;
        int min = Integer.MAX_VALUE;
        for (int i = 0; i < PROBE_SAMPLES; i++) {
            int len = sample(r);
            sum += len;
            wireSum += wireBytes(len);
            min = Math.min(min, len);
            atOrBelow[bucket(len)]++;
        }
        mean = sum / PROBE_SAMPLES;
        meanWire = wireSum / PROBE_SAMPLES;
        smallest = min;
        bucketCdf = new double[10];
        long acc = 0;
        for (int k = 0; k < 10; k++) {
            acc += atOrBelow[k];
            bucketCdf[k] = (double) acc / PROBE_SAMPLES;
        }
    }

    /** "w1".."w5" or "fixed:N", truncated at {@code truncate} bytes when it is positive. */
    public static SizeDistribution parse(String spec, int truncate) {
        String s = spec.trim().toLowerCase(java.util.Locale.ROOT);
        if (s.startsWith("fixed:")) {
            int n = Integer.parseInt(s.substring(6));
            if (n < 1) {
                throw new IllegalArgumentException("fixed size must be positive: " + spec);
            }
            return new SizeDistribution(s, null, truncate > 0 ? Math.min(n, truncate) : n, truncate);
        }
        return new SizeDistribution(s, Workload.named(s), 0, truncate);
    }

    private int cap(int len) {
        return truncate > 0 ? Math.min(len, truncate) : len;
    }

    public String name() {
        return name;
    }

    public int truncate() {
        return truncate;
    }

    /** One message length (the length recorded and bucketed; the request is at least 4 bytes). */
    public int sample(RandomGenerator r) {
        return workload == null ? fixed : cap(workload.sample(r));
    }

    /** Mean message length, bytes. */
    /** Bytes of IP, UDP and Homa DATA headers in front of each (at most 1,432-byte) segment. */
    static final int WIRE_HEADER = 68;
    static final int WIRE_SEGMENT = 1_432;

    /** Bytes a message of {@code length} occupies on a 1,500-byte-MTU link, headers included. */
    public static double wireBytes(double length) {
        return length + Math.max(1, Math.ceil(length / WIRE_SEGMENT)) * WIRE_HEADER;
    }

    /**
     * Mean bytes one RPC puts on a host's uplink when every host both calls and serves: its request
     * with headers, plus the response it sends for one incoming call ({@code responseLength}, or the
     * request's own length when negative: an echo).
     */
    public double meanWireBytesPerRpc(int responseLength) {
        return meanWire + (responseLength < 0 ? meanWire : wireBytes(responseLength));
    }

    public double mean() {
        return mean;
    }

    /** The smallest length the distribution produces (calibration uses it). */
    public int smallest() {
        return smallest;
    }

    /** Index 0..9 of the bucket of {@code length}. */
    public int bucket(int length) {
        for (int k = 0; k < 9; k++) {
            if (length <= bucketMax[k]) {
                return k;
            }
        }
        return 9;
    }

    /** Largest length of bucket k (0..9). */
    public int bucketMax(int k) {
        return bucketMax[k];
    }

    /** Smallest length of bucket k: one more than the previous bucket's largest. */
    public int bucketMin(int k) {
        return k == 0 ? Math.min(smallest, bucketMax[0]) : bucketMax[k - 1] + 1;
    }

    /** Fraction of messages at or below bucket k's largest length. */
    public double bucketCdf(int k) {
        return bucketCdf[k];
    }

    @Override
    public String toString() {
        return name + (truncate > 0 ? " truncated at " + truncate : "") + " buckets " + Arrays.toString(bucketMax);
    }
}
