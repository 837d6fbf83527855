package io.homa.bench;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.SynchronizedHistogram;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs one scenario for one transport: a fresh server and client(s), a warm-up whose calls are
 * discarded, then the measured calls. Every phase is bounded by a call count and a time cap, every
 * call by {@code callTimeout}; the first failed or wrong call ends the run with an error.
 */
public final class ScenarioRunner {
    private final RunMode mode;
    private final Duration callTimeout;
    /** Multiplies the mode's time caps (1: as planned; less when a run is behind its budget). */
    private double timeScale = 1.0;

    public ScenarioRunner(RunMode mode, Duration callTimeout) {
        this.mode = mode;
        this.callTimeout = callTimeout;
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
        return mode.warmupCap().plus(Duration.ofNanos((long) (mode.measureCap().toNanos() * s.measureCapFactor())));
    }

    private Duration warmupCap() {
        return Duration.ofNanos((long) (mode.warmupCap().toNanos() * timeScale));
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
            return switch (scenario.kind()) {
                case UNLOADED -> unloaded(scenario, pair, repetition, start);
                case LOADED -> loaded(scenario, pair, repetition, start);
                case THROUGHPUT -> throughput(scenario, pair, repetition, start);
            };
        } catch (CallFailed e) {
            return failed(scenario, transport, repetition, start, e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return failed(scenario, transport, repetition, start, "interrupted");
        } catch (RuntimeException e) {
            return failed(scenario, transport, repetition, start, e.toString());
        }
    }

    private RunResult failed(Scenario s, Transport t, int rep, long start, String why) {
        return new RunResult(t.name(), s, rep, LatencyStats.of(LatencyStats.newHistogram()), Double.NaN, Double.NaN,
                Double.NaN, (System.nanoTime() - start) / 1e9, why);
    }

    private RunResult unloaded(Scenario s, EchoPair pair, int rep, long start)
            throws CallFailed, InterruptedException {
        Measured m = closedLoop(pair.client(), s);
        return new RunResult(pair.transport().name(), s, rep, m.stats, m.callsPerSecond(),
                m.gbit(s.size()), Double.NaN, (System.nanoTime() - start) / 1e9, null);
    }

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
        Duration maxTime = warmupCap().plus(measureCap(s)).plus(callTimeout);
        Measured m;
        double backgroundGbit;
        try (BackgroundLoad load = new BackgroundLoad(background, s.backgroundThreadsPerClient(),
                Scenario.BACKGROUND_SIZE, 1_000_000, maxTime, callTimeout)) {
            if (!load.awaitFlowing(callTimeout)) {
                throw new CallFailed("background load did not flow: "
                        + (load.error() != null ? load.error() : "no 1 MB call completed within " + callTimeout.toSeconds() + " s"),
                        load.error());
            }
            m = closedLoop(pair.client(), s);
            load.close();
            if (load.error() != null) {
                throw new CallFailed("background call failed: " + load.error(), load.error());
            }
            backgroundGbit = load.gbitPerSecond();
        }
        return new RunResult(pair.transport().name(), s, rep, m.stats, m.callsPerSecond(),
                m.gbit(s.size()), backgroundGbit, (System.nanoTime() - start) / 1e9, null);
    }

    private RunResult throughput(Scenario s, EchoPair pair, int rep, long start)
            throws CallFailed, InterruptedException {
        EchoClient client = pair.client();
        byte[] request = Payloads.of(s.size());
        window(client, request, s.window(), s.warmupCalls(mode), warmupCap(), null);
        Histogram h = new SynchronizedHistogram(1, LatencyStats.HIGHEST_NANOS, 3);
        Measured m = window(client, request, s.window(), s.measuredCalls(mode), measureCap(s), h);
        return new RunResult(pair.transport().name(), s, rep, m.stats, m.callsPerSecond(),
                m.gbit(s.size()), Double.NaN, (System.nanoTime() - start) / 1e9, null);
    }

    private Duration measureCap(Scenario s) {
        return Duration.ofNanos((long) (mode.measureCap().toNanos() * s.measureCapFactor() * timeScale));
    }

    /** Calls measured in one phase. */
    private record Measured(LatencyStats stats, long calls, long nanos) {
        double callsPerSecond() {
            return nanos <= 0 ? Double.NaN : calls * 1e9 / nanos;
        }

        double gbit(int size) {
            return callsPerSecond() * size * 8 / 1e9;
        }
    }

    /** Warm-up, then measured calls, one at a time. */
    private Measured closedLoop(EchoClient client, Scenario s) throws CallFailed, InterruptedException {
        byte[] request = Payloads.of(s.size());
        long seq = 0;
        long end = System.nanoTime() + warmupCap().toNanos();
        for (int i = 0, n = s.warmupCalls(mode); i < n && System.nanoTime() < end; i++) {
            Payloads.stamp(request, ++seq);
            call(client, request);
        }
        Histogram h = LatencyStats.newHistogram();
        long begin = System.nanoTime();
        end = begin + measureCap(s).toNanos();
        long now = begin;
        for (int i = 0, n = s.measuredCalls(mode); i < n && now < end; i++) {
            Payloads.stamp(request, ++seq);
            long t0 = System.nanoTime();
            call(client, request);
            now = System.nanoTime();
            h.recordValue(Math.max(1, Math.min(now - t0, LatencyStats.HIGHEST_NANOS)));
        }
        return new Measured(LatencyStats.of(h), h.getTotalCount(), now - begin);
    }

    private void call(EchoClient client, byte[] request) throws CallFailed, InterruptedException {
        byte[] reply;
        try {
            reply = client.call(request).get(callTimeout.toNanos(), TimeUnit.NANOSECONDS);
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
        Semaphore permits = new Semaphore(window);
        AtomicReference<String> failure = new AtomicReference<>();
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
        if (failure.get() != null) {
            throw new CallFailed(failure.get(), null);
        }
        return new Measured(h == null ? null : LatencyStats.of(h), issued, elapsed);
    }
}
