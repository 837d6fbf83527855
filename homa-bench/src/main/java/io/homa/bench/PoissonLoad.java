package io.homa.bench;

import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * Open-loop background load: calls of one size issued at Poisson arrival times (seeded, so every
 * transport gets the same arrivals) at a fixed offered rate, whether or not earlier calls have
 * completed. A transport that cannot keep up builds a backlog; once {@code maxOutstanding} calls
 * are in flight, further arrivals are shed and counted, never silently delayed, so the achieved
 * rate shows what the transport really carried.
 *
 * <p>One daemon thread issues the calls (round-robin over the clients); completions are counted
 * on whatever thread completes them. It stops by itself after {@code maxTime}.
 */
public final class PoissonLoad implements AutoCloseable {
    /** Counters at one instant; two of them give an interval. */
    public record Mark(long nanos, long arrived, long shed, long completed) {
    }

    /** The background of one measured interval. */
    public record Interval(double offeredGbit, double arrivedGbit, double achievedGbit, long arrived, long shed,
                           long completed) {
        /**
         * Whether the transport carried the offered load: at least 90% of the calls that arrived
         * in the interval (shed ones included) completed in it; below that a backlog grows.
         */
        public boolean carried() {
            return arrived > 0 && completed >= 0.9 * arrived;
        }
    }

    private final List<EchoClient> clients;
    private final byte[] payload;
    private final double offeredGbit;
    private final double meanGapNanos;
    private final SplittableRandom random;
    private final int maxOutstanding;
    private final long deadlineNanos;
    private final Duration callTimeout;
    private final Thread thread;
    private final long startNanos;
    private final AtomicLong arrived = new AtomicLong();
    private final AtomicLong shed = new AtomicLong();
    private final AtomicLong completed = new AtomicLong();
    private final AtomicInteger outstanding = new AtomicInteger();
    private final AtomicReference<Throwable> firstError = new AtomicReference<>();
    private final CountDownLatch firstCompletion = new CountDownLatch(1);
    private volatile boolean stopped;
    /**
     * Threads for the calls of {@link EchoClient#blocking() blocking} clients (one per call in
     * flight, as their users would have), or null when no client blocks.
     */
    private final ExecutorService blockingCallers;

    /**
     * Starts offering {@code gbitPerSecond} of payload (each way) in calls of {@code size} bytes.
     *
     * @param seed           seeds the arrival times: equal seeds, equal arrivals
     * @param maxOutstanding calls in flight at most; arrivals beyond are shed
     * @param maxTime        after this the load stops by itself
     */
    public PoissonLoad(List<EchoClient> clients, int size, double gbitPerSecond, long seed, int maxOutstanding,
                       Duration maxTime, Duration callTimeout) {
        if (clients.isEmpty() || size <= 0 || !(gbitPerSecond > 0) || maxOutstanding < 1) {
            throw new IllegalArgumentException("PoissonLoad needs clients, a size, a positive rate and maxOutstanding >= 1");
        }
        this.clients = List.copyOf(clients);
        this.payload = Payloads.of(size);
        this.offeredGbit = gbitPerSecond;
        this.meanGapNanos = size * 8.0 / gbitPerSecond; // bits / (Gbit/s) = ns
        this.random = new SplittableRandom(seed);
        this.maxOutstanding = maxOutstanding;
        this.startNanos = System.nanoTime();
        this.deadlineNanos = startNanos + maxTime.toNanos();
        this.callTimeout = callTimeout;
        this.blockingCallers = clients.stream().anyMatch(EchoClient::blocking) ? Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "background-caller");
            t.setDaemon(true);
            return t;
        }) : null;
        thread = new Thread(this::run, "background-arrivals");
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        long next = startNanos;
        int i = 0;
        while (!stopped && firstError.get() == null) {
            next += (long) (-Math.log(1 - random.nextDouble()) * meanGapNanos);
            if (next >= deadlineNanos) {
                return;
            }
            for (long wait; !stopped && (wait = next - System.nanoTime()) > 0; ) {
                LockSupport.parkNanos(wait);
            }
            if (stopped) {
                return;
            }
            arrived.incrementAndGet();
            if (outstanding.get() >= maxOutstanding) {
                shed.incrementAndGet();
                continue;
            }
            outstanding.incrementAndGet();
            EchoClient client = clients.get(i++ % clients.size());
            try {
                if (client.blocking()) {
                    blockingCallers.execute(() -> client.call(payload).whenComplete(this::done));
                } else {
                    client.call(payload).whenComplete(this::done);
                }
            } catch (RuntimeException e) {
                done(null, e);
            }
        }
    }

    private void done(byte[] reply, Throwable error) {
        outstanding.decrementAndGet();
        if (error == null && (reply == null || reply.length != payload.length)) {
            error = new IllegalStateException("background echo of " + payload.length + " bytes came back with "
                    + (reply == null ? "null" : reply.length + " bytes"));
        }
        if (error != null) {
            if (!stopped) { // calls cut short by the end of the run are no failure
                firstError.compareAndSet(null, error);
            }
        } else {
            completed.incrementAndGet();
        }
        firstCompletion.countDown();
    }

    /** When the arrivals began ({@link System#nanoTime()}): arrival times are seeded offsets from it. */
    public long startNanos() {
        return startNanos;
    }

    /** Waits until one background call has completed (the load is flowing) or failed. */
    public boolean awaitFlowing(Duration timeout) throws InterruptedException {
        return firstCompletion.await(timeout.toNanos(), TimeUnit.NANOSECONDS) && firstError.get() == null;
    }

    /** The counters now. */
    public Mark mark() {
        return new Mark(System.nanoTime(), arrived.get(), shed.get(), completed.get());
    }

    /** The background between two marks. */
    public Interval between(Mark a, Mark b) {
        double seconds = Math.max(1e-9, (b.nanos() - a.nanos()) / 1e9);
        double bitsPerCall = payload.length * 8.0;
        long arrivedIn = b.arrived() - a.arrived();
        long completedIn = b.completed() - a.completed();
        return new Interval(offeredGbit, arrivedIn * bitsPerCall / seconds / 1e9,
                completedIn * bitsPerCall / seconds / 1e9, arrivedIn, b.shed() - a.shed(), completedIn);
    }

    /** The first failed background call, or {@code null}. */
    public Throwable error() {
        return firstError.get();
    }

    /**
     * Stops the arrivals and waits for the issuing thread. Calls still in flight are not waited
     * for: closing their client fails them, which is not counted as an error.
     */
    @Override
    public void close() {
        stopped = true;
        LockSupport.unpark(thread);
        try {
            thread.join(Math.max(1, callTimeout.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (blockingCallers != null) {
            blockingCallers.shutdown(); // their calls end when the client closes
        }
    }
}
