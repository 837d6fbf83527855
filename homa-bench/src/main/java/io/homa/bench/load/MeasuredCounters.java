package io.homa.bench.load;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * The transport's counters over the measured interval only: a snapshot when it starts and one
 * when it ends, taken on a thread of their own (a snapshot asks every event loop, and the load
 * generator must not wait for that), and their difference with the seconds between them. Rates
 * such as pacer holds per second then leave out the warm-up (the JIT) and the drain.
 */
final class MeasuredCounters {
    private final Thread thread;
    private volatile Map<String, Object> start;
    private volatile Map<String, Object> end;
    private volatile long startNanos;
    private volatile long endNanos;

    /** Starts the snapshot thread: at {@code fromNanos} and {@code untilNanos} ({@link System#nanoTime()}). */
    MeasuredCounters(Supplier<Map<String, Object>> source, long fromNanos, long untilNanos) {
        this.thread = new Thread(() -> {
            parkUntil(fromNanos);
            startNanos = System.nanoTime();
            start = source.get();
            parkUntil(untilNanos);
            endNanos = System.nanoTime();
            end = source.get();
        }, "measured-counters");
        thread.setDaemon(true);
        thread.start();
    }

    private static void parkUntil(long nanos) {
        long wait;
        while ((wait = nanos - System.nanoTime()) > 0) {
            LockSupport.parkNanos(wait);
        }
    }

    /**
     * Waits (at most {@code timeoutMs}) for the second snapshot, then puts {@code transportMetricsMeasured}
     * (the counters' differences; zero ones left out) and {@code measuredMetricsS} into {@code out};
     * nothing when the transport has no counters or a snapshot is missing.
     */
    void putInto(Map<String, Object> out, long timeoutMs) {
        try {
            thread.join(timeoutMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        Map<String, Object> a = start;
        Map<String, Object> b = end;
        if (a == null || b == null || b.isEmpty()) {
            return;
        }
        Map<String, Object> diff = new LinkedHashMap<>();
        b.forEach((k, v) -> {
            if (v instanceof Number n) {
                long d = n.longValue() - (a.get(k) instanceof Number m ? m.longValue() : 0);
                if (d != 0) {
                    diff.put(k, d);
                }
            }
        });
        out.put("measuredMetricsS", (endNanos - startNanos) / (double) TimeUnit.SECONDS.toNanos(1));
        out.put("transportMetricsMeasured", diff);
    }
}
