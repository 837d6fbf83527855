package io.homa.collective.internal;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/** The deadlines of groups whose transport has no timer of its own: one daemon thread for the JVM. */
final class Timers {
    private static final ScheduledThreadPoolExecutor TIMER = new ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "homa-collective-timer");
        t.setDaemon(true);
        return t;
    });

    static {
        TIMER.setRemoveOnCancelPolicy(true);
    }

    private Timers() {
    }

    static Link.Timer schedule(long delayNanos, Runnable task) {
        ScheduledFuture<?> f = TIMER.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
        return () -> f.cancel(false);
    }
}
