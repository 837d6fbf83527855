package io.homa.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Keeps long calls in flight in the background: each thread makes one blocking call after another
 * (so each thread has one call in flight almost all the time) until {@link #close()}, a call
 * count or a time limit, whichever comes first. It stops by itself: nothing it starts outlives
 * the limits by more than one call timeout.
 */
public final class BackgroundLoad implements AutoCloseable {
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicReference<Throwable> firstError = new AtomicReference<>();
    private final CountDownLatch firstCompletion = new CountDownLatch(1);
    private final long maxCalls;
    private final long deadlineNanos;
    private final Duration callTimeout;
    private final long startNanos = System.nanoTime();
    private volatile boolean stopped;
    private volatile long stopNanos;

    /**
     * Starts {@code threadsPerClient} threads for each client in {@code clients}.
     *
     * @param size     bytes per call
     * @param maxCalls calls after which the load stops by itself (all threads together)
     * @param maxTime  time after which it stops by itself
     */
    public BackgroundLoad(List<EchoClient> clients, int threadsPerClient, int size, long maxCalls,
                          Duration maxTime, Duration callTimeout) {
        this.maxCalls = maxCalls;
        this.deadlineNanos = startNanos + maxTime.toNanos();
        this.callTimeout = callTimeout;
        byte[] payload = Payloads.of(size);
        int n = 0;
        for (EchoClient client : clients) {
            for (int i = 0; i < threadsPerClient; i++) {
                Thread t = new Thread(() -> run(client, payload), "background-" + (n++));
                t.setDaemon(true);
                threads.add(t);
            }
        }
        threads.forEach(Thread::start);
    }

    private void run(EchoClient client, byte[] payload) {
        while (!stopped && System.nanoTime() < deadlineNanos && completed.get() < maxCalls) {
            try {
                byte[] reply = client.call(payload).get(callTimeout.toNanos(), TimeUnit.NANOSECONDS);
                if (reply.length != payload.length) {
                    throw new IllegalStateException("background echo of " + payload.length + " bytes came back with " + reply.length);
                }
                completed.incrementAndGet();
                bytes.addAndGet(payload.length);
                firstCompletion.countDown();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                if (!stopped) {
                    firstError.compareAndSet(null, e);
                }
                firstCompletion.countDown();
                return;
            }
        }
    }

    /** Waits until one background call has completed (the load is flowing) or failed. */
    public boolean awaitFlowing(Duration timeout) throws InterruptedException {
        return firstCompletion.await(timeout.toNanos(), TimeUnit.NANOSECONDS) && firstError.get() == null;
    }

    /** Background calls completed so far. */
    public long completedCalls() {
        return completed.get();
    }

    /** Payload bytes carried each way so far. */
    public long bytes() {
        return bytes.get();
    }

    /** Payload goodput each way since the start (until close), in Gbit/s. */
    public double gbitPerSecond() {
        long end = stopped ? stopNanos : System.nanoTime();
        double seconds = Math.max(1e-9, (end - startNanos) / 1e9);
        return bytes.get() * 8 / seconds / 1e9;
    }

    /** Whether it stopped by itself before close: a limit was reached or a call failed. */
    public boolean exhausted() {
        for (Thread t : threads) {
            if (t.isAlive()) {
                return false;
            }
        }
        return true;
    }

    /** The first failed background call, or {@code null}. */
    public Throwable error() {
        return firstError.get();
    }

    /** Stops the threads and waits for them (each ends after its call in flight). */
    @Override
    public void close() {
        if (!stopped) {
            stopNanos = System.nanoTime();
            stopped = true;
        }
        long waitUntil = System.nanoTime() + callTimeout.toNanos() + TimeUnit.SECONDS.toNanos(1);
        for (Thread t : threads) {
            long left = waitUntil - System.nanoTime();
            if (left > 0) {
                try {
                    t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
