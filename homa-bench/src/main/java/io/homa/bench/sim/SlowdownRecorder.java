package io.homa.bench.sim;

import io.homa.bench.load.SizeDistribution;
import io.homa.core.sim.DatacenterWorkload;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The measurements of one simulated run, as the paper makes them: the slowdown of every message
 * started in the measurement window (its one-way time over its best time on an idle network),
 * in HdrHistograms per size bucket (deciles of the workload by message count: bucket 1 holds the
 * shortest 10%); and, for the load sustained, the payload bytes the network delivered during the
 * window (counted per DATA packet, see {@link #deliveredPayload}) against the payload bytes
 * offered during it. In a steady state the two match; when the network cannot carry the load,
 * the backlog grows and fewer bytes come out than go in. Also the bytes of the messages started in
 * the window that were delivered whole by the end of the run ({@code finished_bytes_fraction}),
 * which needs a drain long against the largest messages' time in the network.
 */
final class SlowdownRecorder implements DatacenterWorkload.Observer {
    static final long SCALE = 1000;

    private final SizeDistribution sizes;
    private final long windowStart;
    private final long windowEnd;
    private final Histogram[] buckets = new Histogram[10];
    private long offeredBytes;
    private long offeredAllBytes;
    private long offeredMessages;
    private long completedBytes;
    private long completedMessages;
    private long deliveredInWindowBytes;
    private long payloadInWindow;
    private long failedMessages;

    SlowdownRecorder(SizeDistribution sizes, long windowStart, long windowEnd) {
        this.sizes = sizes;
        this.windowStart = windowStart;
        this.windowEnd = windowEnd;
        for (int k = 0; k < 10; k++) {
            buckets[k] = new Histogram(1_000_000L * SCALE, 3);
        }
    }

    private boolean inWindow(long t) {
        return t >= windowStart && t < windowEnd;
    }

    @Override
    public void offered(int length, long atNanos) {
        offeredAllBytes += length;
        if (inWindow(atNanos)) {
            offeredBytes += length;
            offeredMessages++;
        }
    }

    @Override
    public void delivered(int length, int src, int dst, long startNanos, long endNanos, long idealNanos) {
        if (inWindow(endNanos)) {
            deliveredInWindowBytes += length;
        }
        if (!inWindow(startNanos)) {
            return;
        }
        completedBytes += length;
        completedMessages++;
        Histogram h = buckets[sizes.bucket(length)];
        long v = Math.round((double) (endNanos - startNanos) / idealNanos * SCALE);
        h.recordValue(Math.max(h.getLowestDiscernibleValue(), Math.min(v, h.getHighestTrackableValue())));
    }

    @Override
    public void failed(int length, long startNanos) {
        if (inWindow(startNanos)) {
            failedMessages++;
        }
    }

    /** Payload bytes of the messages offered in the window so far. */
    long offeredBytes() {
        return offeredBytes;
    }

    /** Payload bytes of every message offered so far, in the window or not. */
    long offeredAllBytes() {
        return offeredAllBytes;
    }

    /** The DATA payload bytes delivered to hosts during the window (read from the simulator). */
    void deliveredPayload(long bytes) {
        this.payloadInWindow = bytes;
    }

    double completedBytesFraction() {
        return offeredBytes == 0 ? Double.NaN : (double) payloadInWindow / offeredBytes;
    }

    /** p-th percentile slowdown of bucket k (0..9), NaN when it has no message. */
    double slowdown(int k, double percentile) {
        Histogram h = buckets[k];
        return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / (double) SCALE;
    }

    /** The result fields of this run (the JSON shape of docs/simulation.md). */
    Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("short_p99_slowdown", slowdown(0, 99));
        m.put("short_p50_slowdown", slowdown(0, 50));
        m.put("short_max_bytes", sizes.bucketMax(0));
        m.put("completed_bytes_fraction", completedBytesFraction());
        m.put("finished_bytes_fraction", offeredBytes == 0 ? Double.NaN : (double) completedBytes / offeredBytes);
        m.put("offered_bytes", offeredBytes);
        m.put("delivered_payload_bytes", payloadInWindow);
        m.put("completed_message_bytes_in_window", deliveredInWindowBytes);
        m.put("offered_messages", offeredMessages);
        m.put("completed_messages", completedMessages);
        m.put("unfinished_messages", offeredMessages - completedMessages - failedMessages);
        m.put("unfinished_bytes", offeredBytes - completedBytes);
        m.put("failed_messages", failedMessages);
        List<Object> list = new ArrayList<>();
        for (int k = 0; k < 10; k++) {
            Map<String, Object> b = new LinkedHashMap<>();
            b.put("bucket", k + 1);
            b.put("min_bytes", sizes.bucketMin(k));
            b.put("max_bytes", sizes.bucketMax(k));
            b.put("cdf", sizes.bucketCdf(k));
            b.put("count", buckets[k].getTotalCount());
            b.put("p50_slowdown", slowdown(k, 50));
            b.put("p99_slowdown", slowdown(k, 99));
            b.put("max_slowdown", buckets[k].getTotalCount() == 0 ? Double.NaN : buckets[k].getMaxValue() / (double) SCALE);
            list.add(b);
        }
        m.put("buckets", list);
        return m;
    }
}
