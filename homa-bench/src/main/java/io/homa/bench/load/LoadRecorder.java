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
 * and two of slowdowns (x1000): against the shared base RTT (the smaller of the protocols'
 * unloaded RTTs, so that both are divided by the same ideal) and against this protocol's own
 * unloaded RTT (how much load costs this protocol), plus counters. Thread-safe (completions arrive on I/O threads).
 * Histograms are written into the JSON (compressed, base64) so the report can merge clients exactly.
 */
public final class LoadRecorder {
    static final long HIGHEST_NANOS = 600_000_000_000L;
    static final long SLOWDOWN_SCALE = 1000;

    private final SizeDistribution sizes;
    private final double baseRttUs;
    private final double ownBaseRttUs;
    private final double linkGbps;
    private final Histogram[] rtt = new Histogram[10];
    private final Histogram[] slowdown = new Histogram[10];
    private final Histogram[] ownSlowdown = new Histogram[10];
    private long completed;
    private long completedBytes;
    private long failures;
    private final Map<String, Long> failureKinds = new LinkedHashMap<>();

    /** A base of 0 records no slowdowns of that kind. */
    public LoadRecorder(SizeDistribution sizes, double baseRttUs, double ownBaseRttUs, double linkGbps) {
        this.sizes = sizes;
        this.baseRttUs = baseRttUs;
        this.ownBaseRttUs = ownBaseRttUs;
        this.linkGbps = linkGbps;
        for (int k = 0; k < 10; k++) {
            rtt[k] = newRtt();
            slowdown[k] = newSlowdown();
            ownSlowdown[k] = newSlowdown();
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
        recordSlowdown(slowdown[k], baseRttUs, length, rttNanos);
        recordSlowdown(ownSlowdown[k], ownBaseRttUs, length, rttNanos);
        completed++;
        completedBytes += length;
    }

    private void recordSlowdown(Histogram h, double base, int length, long rttNanos) {
        if (base > 0 && linkGbps > 0) {
            double s = (rttNanos / 1000.0) / idealUs(base, linkGbps, length);
            h.recordValue(Math.max(1, Math.min((long) (s * SLOWDOWN_SCALE), h.getHighestTrackableValue())));
        }
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
            out.add(bucketJson(sizes, k, rtt[k], slowdown[k], ownSlowdown[k], true));
        }
        return out;
    }

    /** The statistics of one bucket; with {@code histograms}, the encoded histograms too. */
    static Map<String, Object> bucketJson(SizeDistribution sizes, int k, Histogram r, Histogram s, Histogram own, boolean histograms) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("bucket", k + 1);
        m.put("minLength", sizes.bucketMin(k));
        m.put("maxLength", sizes.bucketMax(k));
        m.put("cdf", sizes.bucketCdf(k));
        bucketStats(m, r, s, own);
        if (histograms) {
            m.put("rttHistogram", encode(r));
            m.put("slowdownHistogram", encode(s));
            m.put("ownSlowdownHistogram", encode(own));
        }
        return m;
    }

    /** Percentiles of one bucket; {@code own} holds the slowdowns against the protocol's own unloaded RTT. */
    static void bucketStats(Map<String, Object> m, Histogram r, Histogram s, Histogram own) {
        m.put("count", r.getTotalCount());
        m.put("p50RttUs", pct(r, 50, 1000.0));
        m.put("p99RttUs", pct(r, 99, 1000.0));
        m.put("p999RttUs", pct(r, 99.9, 1000.0));
        m.put("p50Slowdown", pct(s, 50, SLOWDOWN_SCALE));
        m.put("p99Slowdown", pct(s, 99, SLOWDOWN_SCALE));
        m.put("p999Slowdown", pct(s, 99.9, SLOWDOWN_SCALE));
        m.put("p50OwnSlowdown", pct(own, 50, SLOWDOWN_SCALE));
        m.put("p99OwnSlowdown", pct(own, 99, SLOWDOWN_SCALE));
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
