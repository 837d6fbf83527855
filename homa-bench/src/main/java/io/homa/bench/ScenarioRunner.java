package io.homa.bench;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.SynchronizedHistogram;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs one scenario for one transport: a fresh server and client(s), a warm-up whose calls are
 * discarded, then the measured calls. Every phase is bounded by a call count and a time cap, every
 * call by {@code callTimeout}; the first failed or wrong call ends the run with an error.
 */
public final class ScenarioRunner {
    /** Seed of the background arrivals in repetition 0 (repetition r: + r); the same for every transport. */
    static final long BACKGROUND_SEED = 0x5eed;
    /** Background calls in flight at most (1 MB each); arrivals beyond are shed and reported. */
    static final int MAX_BACKGROUND_OUTSTANDING = 32;
    /**
     * Default offered background of the loaded scenarios, Gbit/s each way: chosen so that every
     * transport carries it on a 2-core loopback and the loaded scenario compares latency under the
     * same load (the reasoning is in docs/benchmarks.md).
     */
    public static final double DEFAULT_BACKGROUND_GBIT = 2.0;

    private final RunMode mode;
    private final Duration callTimeout;
    private final double backgroundGbit;
    /** Multiplies the mode's time caps (1: as planned; less when a run is behind its budget). */
    private double timeScale = 1.0;

    public ScenarioRunner(RunMode mode, Duration callTimeout) {
        this(mode, callTimeout, DEFAULT_BACKGROUND_GBIT);
    }

    /** A runner whose loaded scenarios offer {@code backgroundGbit} of 1 MB calls (Poisson arrivals). */
    public ScenarioRunner(RunMode mode, Duration callTimeout, double backgroundGbit) {
        if (!(backgroundGbit > 0)) {
            throw new IllegalArgumentException("background load must be positive: " + backgroundGbit);
        }
        this.mode = mode;
        this.callTimeout = callTimeout;
        this.backgroundGbit = backgroundGbit;
    }

    /** Thrown inside a run when a call fails or echoes wrong bytes. */
    static final class CallFailed extends Exception {
        CallFailed(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** Scales the time caps of the next runs (0.1 to 1): the compare command's budget guard. */
    public void setTimeScale(double scale) {
        this.timeScale = Math.max(0.1, Math.min(1.0, scale));
    }

    /** The time one run of {@code s} may take at most when nothing fails (caps, unscaled). */
    public Duration nominalDuration(Scenario s) {
        return s.kind() == Scenario.Kind.LOADED ? mode.loadedWarmup().plus(mode.loadedMeasure())
                : mode.warmupCap().plus(mode.measureCap());
    }

    private Duration warmupCap(Scenario s) {
        return scaled(s.kind() == Scenario.Kind.LOADED ? mode.loadedWarmup() : mode.warmupCap());
    }

    private Duration measureCap(Scenario s) {
        return scaled(s.kind() == Scenario.Kind.LOADED ? mode.loadedMeasure() : mode.measureCap());
    }

    private Duration scaled(Duration d) {
        return Duration.ofNanos((long) (d.toNanos() * timeScale));
    }

    /**
     * Warms the JIT up for {@code transport} before anything is measured: for about {@code budget},
     * calls of 100 B, 10 KB and (where the transport carries them) 1 MB, one at a time. Nothing is
     * recorded; a failure here shows again, and is reported, in the measured runs.
     */
    public void warmUp(Transport transport, Duration budget) {
        long end = System.nanoTime() + budget.toNanos();
        try (EchoPair pair = EchoPair.open(transport)) {
            int[] sizes = {100, 10_000, 1_000_000};
            for (int round = 0; System.nanoTime() < end; round++) {
                int size = sizes[round % sizes.length];
                if (!transport.supports(size)) {
                    continue;
                }
                byte[] request = Payloads.of(size);
                int calls = size >= 1_000_000 ? 5 : 200;
                for (int i = 0; i < calls && System.nanoTime() < end; i++) {
                    call(pair.client(), request);
                }
            }
        } catch (CallFailed | RuntimeException e) {
            // reported by the measured runs
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public RunResult run(Scenario scenario, Transport transport, int repetition) {
        long start = System.nanoTime();
        try (EchoPair pair = EchoPair.open(transport)) {
            server = pair.server();
            return switch (scenario.kind()) {
                case UNLOADED -> unloaded(scenario, pair, repetition, start);
                case LOADED -> loaded(scenario, pair, repetition, start);
                case THROUGHPUT -> throughput(scenario, pair, repetition, start);
                case INCAST -> incast(scenario, pair, repetition, start);
            };
        } catch (CallFailed e) {
            return failed(scenario, transport, repetition, start, e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return failed(scenario, transport, repetition, start, "interrupted");
        } catch (RuntimeException e) {
            return failed(scenario, transport, repetition, start, e.toString());
        } finally {
            server = null;
        }
    }

    /** The server of the run in progress (its process's cost counts when it is another process). */
    private EchoServer server;

    private Meter startMeter() {
        EchoServer.Cost remote = server == null ? null : server.startCost();
        return new Meter(CostMeter.start(), remote);
    }

    /** This process's cost meter, and the server process's when it is another one: both count. */
    private record Meter(CostMeter local, EchoServer.Cost remote) {
        CostMeter.Cost stop() {
            CostMeter.Cost here = local.stop();
            if (remote == null) {
                return here;
            }
            CostMeter.Cost there = remote.stop();
            return new CostMeter.Cost(sum(here.cpuNanos(), there.cpuNanos()),
                    sum(here.allocatedBytes(), there.allocatedBytes()), here.wallNanos(),
                    sum(here.compileMillis(), there.compileMillis()));
        }

        private static long sum(long a, long b) {
            return a < 0 || b < 0 ? -1 : a + b;
        }
    }

    private RunResult failed(Scenario s, Transport t, int rep, long start, String why) {
        return new RunResult(t.name(), s, rep, LatencyStats.of(LatencyStats.newHistogram()), Double.NaN, Double.NaN,
                null, Double.NaN, Double.NaN, Double.NaN, (System.nanoTime() - start) / 1e9, why, Double.NaN);
    }

    private RunResult result(Scenario s, EchoPair pair, int rep, long start, Measured m, PoissonLoad.Interval background) {
        long calls = m.calls + (background == null ? 0 : background.completed());
        return new RunResult(pair.transport().name(), s, rep, m.stats, m.callsPerSecond(), m.gbit(s.size()), background,
                m.cost.cpuMicrosPer(calls), m.cost.bytesPer(calls), m.cost.coresBusy(), (System.nanoTime() - start) / 1e9, null,
                m.cost.compileMillis() < 0 ? Double.NaN : m.cost.compileMillis(), m.nanos / 1e9);
    }

    private RunResult unloaded(Scenario s, EchoPair pair, int rep, long start)
            throws CallFailed, InterruptedException {
        Measured m = CHAIN_CALLS ? chained(pair.client(), s) : closedLoop(pair.client(), s, 0, null);
        return result(s, pair, rep, start, m, null);
    }

    /**
     * {@code homa.bench.chainCalls=true}: the unloaded scenario's calls are made by the completion
     * of the call before ({@link #chained}), not from this thread: with Homa's inline execution
     * (compare's setting) they are made on the client's event loop, the way a service that calls
     * from its callbacks makes them, and nobody waits in {@code get()}.
     */
    static final boolean CHAIN_CALLS = Boolean.getBoolean("homa.bench.chainCalls");

    /**
     * The unloaded scenario with each call started by the completion of the one before (on the
     * thread that completes it; a future already complete when returned is followed in a loop, not
     * by recursion). Warm-up and measured phases as {@link #closedLoop}, with the same caps; a
     * call's latency is from its start to its completion.
     */
    private Measured chained(EchoClient client, Scenario s) throws CallFailed, InterruptedException {
        byte[] request = Payloads.of(s.size());
        Chain warm = new Chain(client, request, s.warmupCalls(mode), System.nanoTime() + warmupCap(s).toNanos(), null, 0);
        warm.await();
        Histogram h = LatencyStats.newHistogram();
        Meter meter = startMeter();
        long begin = System.nanoTime();
        Chain measured = new Chain(client, request, s.measuredCalls(mode), begin + measureCap(s).toNanos(), h, warm.seq);
        long end = measured.await();
        CostMeter.Cost cost = meter.stop();
        return new Measured(LatencyStats.of(h), h.getTotalCount(), end - begin, cost);
    }

    /** One phase of {@link #chained}: its calls, one after another, each started where the one before completed. */
    private final class Chain {
        private final EchoClient client;
        private final byte[] request;
        private final int calls;
        private final long endNanos;
        private final Histogram h;
        private final CompletableFuture<Long> done = new CompletableFuture<>();
        private int made;
        long seq;

        Chain(EchoClient client, byte[] request, int calls, long endNanos, Histogram h, long seq) {
            this.client = client;
            this.request = request;
            this.calls = calls;
            this.endNanos = endNanos;
            this.h = h;
            this.seq = seq;
            next();
        }

        /** Makes calls until one is still in flight (its completion goes on) or the phase ends. */
        private void next() {
            while (!done.isDone()) {
                if (made == calls || System.nanoTime() - endNanos >= 0) {
                    done.complete(System.nanoTime());
                    return;
                }
                made++;
                Payloads.stamp(request, ++seq);
                long t0 = System.nanoTime();
                CompletableFuture<byte[]> f;
                try {
                    f = client.call(request);
                } catch (RuntimeException e) {
                    done.completeExceptionally(new CallFailed("call of " + request.length + " bytes failed: " + e, e));
                    return;
                }
                if (!f.isDone()) {
                    f.whenComplete((reply, error) -> {
                        if (ended(t0, reply, error)) {
                            next();
                        }
                    });
                    return;
                }
                byte[] reply = null;
                Throwable error = null;
                try {
                    reply = f.join();
                } catch (CompletionException | java.util.concurrent.CancellationException e) {
                    error = e.getCause() != null ? e.getCause() : e;
                }
                if (!ended(t0, reply, error)) {
                    return;
                }
            }
        }

        /** Records a call that ended; false (and the phase failed) if it failed or echoed wrong bytes. */
        private boolean ended(long t0, byte[] reply, Throwable error) {
            long now = System.nanoTime();
            if (error != null) {
                done.completeExceptionally(new CallFailed("call of " + request.length + " bytes failed: " + error, error));
                return false;
            }
            if (!Payloads.echoes(request, reply)) {
                done.completeExceptionally(new CallFailed("echo of " + request.length + " bytes came back wrong ("
                        + (reply == null ? "null" : reply.length + " bytes") + ")", null));
                return false;
            }
            if (h != null) {
                h.recordValue(Math.max(1, Math.min(now - t0, LatencyStats.HIGHEST_NANOS)));
            }
            return true;
        }

        /** Waits for the phase (its time cap and one call timeout at most); its end, in {@link System#nanoTime()}. */
        long await() throws CallFailed, InterruptedException {
            long allowed = Math.max(0, endNanos - System.nanoTime()) + callTimeout.toNanos();
            try {
                return done.get(allowed, TimeUnit.NANOSECONDS);
            } catch (ExecutionException e) {
                throw e.getCause() instanceof CallFailed c ? c : new CallFailed(String.valueOf(e.getCause()), e.getCause());
            } catch (TimeoutException e) {
                done.completeExceptionally(e); // the chain stops at its next call
                throw new CallFailed("chained calls of " + request.length + " bytes got no reply within "
                        + callTimeout.toMillis() + " ms", e);
            }
        }
    }

    /**
     * The probe's phases are timed (not counted) here, so that every transport's measured interval
     * covers the same stretch of the seeded arrivals: equal offered background.
     */
    private RunResult loaded(Scenario s, EchoPair pair, int rep, long start)
            throws CallFailed, InterruptedException {
        List<EchoClient> background = new ArrayList<>();
        if (s.backgroundClients() == 0) {
            background.add(pair.client());
        } else {
            for (int i = 0; i < s.backgroundClients(); i++) {
                background.add(pair.newClient());
            }
        }
        // The load outlives the probe's phases by at most one call timeout, whatever happens.
        Duration maxTime = warmupCap(s).plus(measureCap(s)).plus(callTimeout);
        Measured m;
        PoissonLoad.Interval carried;
        try (PoissonLoad load = new PoissonLoad(background, Scenario.BACKGROUND_SIZE, backgroundGbit,
                BACKGROUND_SEED + rep, MAX_BACKGROUND_OUTSTANDING, maxTime, callTimeout)) {
            if (!load.awaitFlowing(callTimeout)) {
                throw new CallFailed("background load did not flow: "
                        + (load.error() != null ? load.error() : "no 1 MB call completed within " + callTimeout.toSeconds() + " s"),
                        load.error());
            }
            // The measured interval starts a fixed time after the first arrival (unless the first
            // completion came later), so that it covers the same arrivals for every transport.
            MarkHolder marks = new MarkHolder(load);
            m = closedLoop(pair.client(), s, Math.max(System.nanoTime(), load.startNanos() + warmupCap(s).toNanos()), marks);
            carried = load.between(marks.begin, marks.end);
            if (load.error() != null) {
                throw new CallFailed("background call failed: " + load.error(), load.error());
            }
        }
        return result(s, pair, rep, start, m, carried);
    }

    /** Takes the background's counters where the probe's measured interval begins and ends. */
    private static final class MarkHolder {
        final PoissonLoad load;
        PoissonLoad.Mark begin;
        PoissonLoad.Mark end;

        MarkHolder(PoissonLoad load) {
            this.load = load;
        }
    }

    private RunResult throughput(Scenario s, EchoPair pair, int rep, long start)
            throws CallFailed, InterruptedException {
        EchoClient client = pair.client();
        byte[] request = Payloads.of(s.size());
        window(client, request, s.window(), s.warmupCalls(mode), warmupCap(s), null);
        Histogram h = new SynchronizedHistogram(1, LatencyStats.HIGHEST_NANOS, 3);
        Measured m = window(client, request, s.window(), s.measuredCalls(mode), measureCap(s), h);
        return result(s, pair, rep, start, m, null);
    }

    /** Transports whose clients block are left out ({@link Scenario#appliesTo}): their calls cannot start together. */
    private RunResult incast(Scenario s, EchoPair pair, int rep, long start)
            throws CallFailed, InterruptedException {
        List<EchoClient> clients = new ArrayList<>();
        clients.add(pair.client());
        while (clients.size() < s.window()) {
            clients.add(pair.newClient());
        }
        byte[] request = Payloads.of(s.size());
        rounds(clients, request, s.warmupCalls(mode), warmupCap(s), null);
        Histogram h = LatencyStats.newHistogram();
        Measured m = rounds(clients, request, s.measuredCalls(mode), measureCap(s), h);
        return result(s, pair, rep, start, m, null);
    }

    /**
     * Up to {@code rounds} rounds (or until {@code cap} passed), in each of which every client
     * starts one call, all from this thread one after another without waiting, then all are
     * awaited. A round's time, its slowest call's, goes into {@code h} if given; the calls counted
     * are every client's.
     */
    private Measured rounds(List<EchoClient> clients, byte[] request, int rounds, Duration cap, Histogram h)
            throws CallFailed, InterruptedException {
        List<CompletableFuture<byte[]>> calls = new ArrayList<>(clients.size());
        Meter meter = startMeter();
        long begin = System.nanoTime();
        long end = begin + cap.toNanos();
        long now = begin;
        long made = 0;
        for (int r = 0; r < rounds && now < end; r++) {
            long t0 = System.nanoTime();
            calls.clear();
            for (EchoClient c : clients) {
                calls.add(c.call(request));
            }
            for (CompletableFuture<byte[]> f : calls) {
                check(f, request);
            }
            made += calls.size();
            now = System.nanoTime();
            if (h != null) {
                h.recordValue(Math.max(1, Math.min(now - t0, LatencyStats.HIGHEST_NANOS)));
            }
        }
        CostMeter.Cost cost = meter.stop();
        return new Measured(h == null ? null : LatencyStats.of(h), made, now - begin, cost);
    }

    /** Calls measured in one phase, and what the phase cost the process. */
    private record Measured(LatencyStats stats, long calls, long nanos, CostMeter.Cost cost) {
        double callsPerSecond() {
            return nanos <= 0 ? Double.NaN : calls * 1e9 / nanos;
        }

        double gbit(int size) {
            return callsPerSecond() * size * 8 / 1e9;
        }
    }

    /**
     * Warm-up, then measured calls, one at a time; each phase ends after its calls or its time cap.
     * With {@code timedWarmupEnd} not 0, both phases are timed instead: the warm-up ends at that
     * instant ({@link System#nanoTime()}) and the measurement after its time cap, whatever the
     * number of calls. {@code marks}, if given, takes the background's counters at the measured
     * interval's ends.
     */
    private Measured closedLoop(EchoClient client, Scenario s, long timedWarmupEnd, MarkHolder marks)
            throws CallFailed, InterruptedException {
        boolean timed = timedWarmupEnd != 0;
        byte[] request = Payloads.of(s.size());
        long seq = 0;
        long end = timed ? timedWarmupEnd : System.nanoTime() + warmupCap(s).toNanos();
        for (int i = 0, n = timed ? Integer.MAX_VALUE : s.warmupCalls(mode); i < n && System.nanoTime() < end; i++) {
            Payloads.stamp(request, ++seq);
            call(client, request);
        }
        Histogram h = LatencyStats.newHistogram();
        if (marks != null) {
            marks.begin = marks.load.mark();
        }
        Meter meter = startMeter();
        long begin = System.nanoTime();
        end = begin + measureCap(s).toNanos();
        long now = begin;
        for (int i = 0, n = timed ? Integer.MAX_VALUE : s.measuredCalls(mode); i < n && now < end; i++) {
            Payloads.stamp(request, ++seq);
            long t0 = System.nanoTime();
            call(client, request);
            now = System.nanoTime();
            h.recordValue(Math.max(1, Math.min(now - t0, LatencyStats.HIGHEST_NANOS)));
        }
        CostMeter.Cost cost = meter.stop();
        if (marks != null) {
            marks.end = marks.load.mark();
        }
        return new Measured(LatencyStats.of(h), h.getTotalCount(), now - begin, cost);
    }

    private void call(EchoClient client, byte[] request) throws CallFailed, InterruptedException {
        check(client.call(request), request);
    }

    /** Waits for {@code call} (at most the call timeout) and checks that it echoed {@code request}. */
    private void check(CompletableFuture<byte[]> call, byte[] request) throws CallFailed, InterruptedException {
        byte[] reply;
        try {
            reply = call.get(callTimeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw new CallFailed("call of " + request.length + " bytes failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new CallFailed("call of " + request.length + " bytes got no reply within " + callTimeout.toMillis() + " ms", e);
        }
        if (!Payloads.echoes(request, reply)) {
            throw new CallFailed("echo of " + request.length + " bytes came back wrong ("
                    + (reply == null ? "null" : reply.length + " bytes") + ")", null);
        }
    }

    /**
     * Keeps {@code window} calls outstanding until {@code calls} were issued or {@code cap} passed,
     * then waits for the last ones. Latency of each call is recorded into {@code h} if given.
     */
    private Measured window(EchoClient client, byte[] request, int window, int calls, Duration cap, Histogram h)
            throws CallFailed, InterruptedException {
        if (client.blocking()) {
            return blockingWindow(client, request, window, calls, cap, h);
        }
        Semaphore permits = new Semaphore(window);
        AtomicReference<String> failure = new AtomicReference<>();
        Meter meter = startMeter();
        long begin = System.nanoTime();
        long end = begin + cap.toNanos();
        long issued = 0;
        while (issued < calls && System.nanoTime() < end && failure.get() == null) {
            if (!permits.tryAcquire(callTimeout.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new CallFailed("no reply within " + callTimeout.toMillis() + " ms with " + window + " calls outstanding", null);
            }
            long t0 = System.nanoTime();
            issued++;
            client.call(request).whenComplete((reply, error) -> {
                if (error != null) {
                    failure.compareAndSet(null, "call of " + request.length + " bytes failed: " + error);
                } else if (reply.length != request.length) {
                    failure.compareAndSet(null, "echo of " + request.length + " bytes came back with " + reply.length);
                } else if (h != null) {
                    h.recordValue(Math.max(1, Math.min(System.nanoTime() - t0, LatencyStats.HIGHEST_NANOS)));
                }
                permits.release();
            });
        }
        if (!permits.tryAcquire(window, callTimeout.toNanos(), TimeUnit.NANOSECONDS)) {
            throw new CallFailed("the last calls got no reply within " + callTimeout.toMillis() + " ms", null);
        }
        long elapsed = System.nanoTime() - begin;
        CostMeter.Cost cost = meter.stop();
        if (failure.get() != null) {
            throw new CallFailed(failure.get(), null);
        }
        return new Measured(h == null ? null : LatencyStats.of(h), issued, elapsed, cost);
    }

    /**
     * {@link #window} for a {@link EchoClient#blocking() blocking} client: {@code window} threads,
     * each making one call after another, as a user of a blocking client keeps calls in flight.
     */
    private Measured blockingWindow(EchoClient client, byte[] request, int window, int calls, Duration cap, Histogram h)
            throws CallFailed, InterruptedException {
        AtomicReference<String> failure = new AtomicReference<>();
        AtomicLong issued = new AtomicLong();
        AtomicLong completed = new AtomicLong();
        Meter meter = startMeter();
        long begin = System.nanoTime();
        long end = begin + cap.toNanos();
        List<Thread> callers = new ArrayList<>();
        for (int t = 0; t < window; t++) {
            Thread caller = new Thread(() -> {
                while (failure.get() == null && System.nanoTime() < end && issued.getAndIncrement() < calls) {
                    long t0 = System.nanoTime();
                    try {
                        call(client, request);
                    } catch (CallFailed e) {
                        failure.compareAndSet(null, e.getMessage());
                        return;
                    } catch (InterruptedException e) {
                        failure.compareAndSet(null, "interrupted");
                        return;
                    }
                    if (h != null) {
                        h.recordValue(Math.max(1, Math.min(System.nanoTime() - t0, LatencyStats.HIGHEST_NANOS)));
                    }
                    completed.incrementAndGet();
                }
            }, "blocking-caller-" + t);
            caller.setDaemon(true);
            callers.add(caller);
            caller.start();
        }
        long giveUp = end + callTimeout.toNanos();
        for (Thread caller : callers) {
            caller.join(Math.max(1, (giveUp - System.nanoTime()) / 1_000_000));
            if (caller.isAlive()) {
                throw new CallFailed("the last calls got no reply within " + callTimeout.toMillis() + " ms", null);
            }
        }
        long elapsed = System.nanoTime() - begin;
        CostMeter.Cost cost = meter.stop();
        if (failure.get() != null) {
            throw new CallFailed(failure.get(), null);
        }
        return new Measured(h == null ? null : LatencyStats.of(h), completed.get(), elapsed, cost);
    }
}
