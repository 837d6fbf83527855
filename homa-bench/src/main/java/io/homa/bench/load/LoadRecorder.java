package io.homa.bench.load;

import org.HdrHistogram.Histogram;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The measurements of one load client: per size bucket, an HdrHistogram of round-trip times (ns)
 * and one of slowdowns (x1000), plus counters. Thread-safe (completions arrive on I/O threads).
 * Histograms are written into the JSON (compressed, base64) so the report can merge clients exactly.
 */
public final class LoadRecorder {
    static final long HIGHEST_NANOS = 600_000_000_000L;
    static final long SLOWDOWN_SCALE = 1000;

    private final SizeDistribution sizes;
    private final double baseRttUs;
    private final double linkGbps;
    private final Histogram[] rtt = new Histogram[10];
    private final Histogram[] slowdown = new Histogram[10];
    private long completed;
    private long completedBytes;
    private long failures;
    private final Map<String, Long> failureKinds = new LinkedHashMap<>();

    public LoadRecorder(SizeDistribution sizes, double baseRttUs, double linkGbps) {
        this.sizes = sizes;
        this.baseRttUs = baseRttUs;
        this.linkGbps = linkGbps;
        for (int k = 0; k < 10; k++) {
            rtt[k] = newRtt();
            slowdown[k] = newSlowdown();
        }
    }

    static Histogram newRtt() {
        return new Histogram(1, HIGHEST_NANOS, 3);
    }

    static Histogram newSlowdown() {
        return new Histogram(1, 100_000_000L * SLOWDOWN_SCALE, 3);
    }

    /** The best round trip of a message of {@code length} bytes: base RTT + length x 8 / link rate. */
    public static double idealUs(double baseRttUs, double linkGbps, int length) {
        return baseRttUs + length * 8.0 / (linkGbps * 1000.0);
    }

    public synchronized void success(int length, long rttNanos) {
        int k = sizes.bucket(length);
        long v = Math.max(1, Math.min(rttNanos, HIGHEST_NANOS));
        rtt[k].recordValue(v);
        if (baseRttUs > 0 && linkGbps > 0) {
            double s = (rttNanos / 1000.0) / idealUs(baseRttUs, linkGbps, length);
            slowdown[k].recordValue(Math.max(1, Math.min((long) (s * SLOWDOWN_SCALE), slowdown[k].getHighestTrackableValue())));
        }
        completed++;
        completedBytes += length;
    }

    public synchronized void failure(Throwable t) {
        failures++;
        Throwable c = t;
        while (c.getCause() != null && (c instanceof java.util.concurrent.CompletionException
                || c instanceof java.util.concurrent.ExecutionException)) {
            c = c.getCause();
        }
        failureKinds.merge(c.getClass().getSimpleName(), 1L, Long::sum);
    }

    public synchronized long completed() {
        return completed;
    }

    public synchronized long completedBytes() {
        return completedBytes;
    }

    public synchronized long failures() {
        return failures;
    }

    public synchronized Map<String, Long> failureKinds() {
        return new LinkedHashMap<>(failureKinds);
    }

    /** Per-bucket JSON objects (statistics and the encoded histograms). */
    public synchronized List<Object> bucketsJson() {
        List<Object> out = new ArrayList<>();
        for (int k = 0; k < 10; k++) {
            out.add(bucketJson(sizes, k, rtt[k], slowdown[k], true));
        }
        return out;
    }

    /** The statistics of one bucket; with {@code histograms}, the encoded histograms too. */
    static Map<String, Object> bucketJson(SizeDistribution sizes, int k, Histogram r, Histogram s, boolean histograms) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("bucket", k + 1);
        m.put("minLength", sizes.bucketMin(k));
        m.put("maxLength", sizes.bucketMax(k));
        m.put("cdf", sizes.bucketCdf(k));
        bucketStats(m, r, s);
        if (histograms) {
            m.put("rttHistogram", encode(r));
            m.put("slowdownHistogram", encode(s));
        }
        return m;
    }

    static void bucketStats(Map<String, Object> m, Histogram r, Histogram s) {
        m.put("count", r.getTotalCount());
        m.put("p50RttUs", pct(r, 50, 1000.0));
        m.put("p99RttUs", pct(r, 99, 1000.0));
        m.put("p999RttUs", pct(r, 99.9, 1000.0));
        m.put("p50Slowdown", pct(s, 50, SLOWDOWN_SCALE));
        m.put("p99Slowdown", pct(s, 99, SLOWDOWN_SCALE));
        m.put("p999Slowdown", pct(s, 99.9, SLOWDOWN_SCALE));
    }

    static double pct(Histogram h, double p, double scale) {
        return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(p) / scale;
    }

    static String encode(Histogram h) {
        ByteBuffer b = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
        int n = h.encodeIntoCompressedByteBuffer(b);
        byte[] bytes = new byte[n];
        b.flip();
        b.get(bytes);
        return Base64.getEncoder().encodeToString(bytes);
    }

    static Histogram decode(String s) {
        try {
            return Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(Base64.getDecoder().decode(s)), 0);
        } catch (java.util.zip.DataFormatException e) {
            throw new IllegalArgumentException("bad histogram: " + e, e);
        }
    }
}
