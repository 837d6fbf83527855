package io.homa.bench;

import java.time.Duration;
import java.util.List;

/**
 * How long {@code compare} measures: repetitions, call counts and the time caps that bound every
 * run whatever the machine's speed; loaded runs are timed (warm-up and measurement of fixed
 * length). Worst case (every run hitting its caps) with the seven default transports (homa-2loops
 * in the throughput scenarios only, warmed up with homa): FULL 6 x 8 s of JIT warm-up, 35 runs x
 * 5 repetitions x 1.6 s and 10 loaded runs x 5 x 3.4 s = 498 s, within a budget of 623 s sized
 * from that plan; QUICK 6 x 4 s, 22 x 3 x 1.3 s and 5 x 3 x 2.3 s = 144 s, budget 180 s (plus,
 * per run, the setup and, per loaded run, the wait for its first background call: the budget's
 * quarter of room). Repetitions that the steady-state rule runs again add their own time to the
 * budget. The budget guard shrinks the caps of the remaining runs when the command falls behind.
 * The JIT warm-up is 8 s because Homa's code was still being compiled after 8 s of calls, and a
 * repetition run again for the JIT costs more than warming up once.
 */
public enum RunMode {
    FULL(5, 1.0, Duration.ofMillis(400), Duration.ofMillis(1200), Duration.ofMillis(400), Duration.ofMillis(3000),
            Duration.ofSeconds(8), Duration.ofSeconds(290), 4),
    QUICK(3, 0.5, Duration.ofMillis(300), Duration.ofMillis(1000), Duration.ofMillis(300), Duration.ofMillis(2000),
            Duration.ofSeconds(4), Duration.ofSeconds(90), 3),
    /** A few hundred calls in all: checks that everything works (the tests run it); no steady-state rule. */
    SMOKE(1, 0.0, Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofMillis(200), Duration.ofMillis(500),
            Duration.ZERO, Duration.ofSeconds(3600), 0);

    private final int repetitions;
    private final double scale;
    private final Duration warmupCap;
    private final Duration measureCap;
    private final Duration loadedWarmup;
    private final Duration loadedMeasure;
    private final Duration jitWarmup;
    private final Duration budget;
    private final int steadyRetries;

    RunMode(int repetitions, double scale, Duration warmupCap, Duration measureCap, Duration loadedWarmup,
            Duration loadedMeasure, Duration jitWarmup, Duration budget, int steadyRetries) {
        this.steadyRetries = steadyRetries;
        this.repetitions = repetitions;
        this.scale = scale;
        this.warmupCap = warmupCap;
        this.measureCap = measureCap;
        this.loadedWarmup = loadedWarmup;
        this.loadedMeasure = loadedMeasure;
        this.jitWarmup = jitWarmup;
        this.budget = budget;
    }

    /**
     * The least time for all runs; {@code compare} gives them more when its plan needs more (its
     * runs at their caps, the warm-ups, and a quarter for the repetitions run again). When the
     * runs fall behind the budget (a slow or busy machine), the next runs' caps shrink (down to a
     * tenth) so that the whole command still ends in time.
     */
    public Duration budget() {
        return budget;
    }

    /**
     * How many times a repetition whose measured interval had the JIT compiling for 2% of it or
     * more is run again; after that it is reported unsteady and kept out of the figures
     * ({@link RunResult#steady()}, {@link Summary#unsteadyRepetitions()}).
     */
    public int steadyRetries() {
        return steadyRetries;
    }

    /** Warm-up per transport before the first run (the JIT compiles the hot paths). */
    public Duration jitWarmup() {
        return jitWarmup;
    }

    public int repetitions() {
        return repetitions;
    }

    /** Longest warm-up of one run. */
    public Duration warmupCap() {
        return warmupCap;
    }

    /** Longest measurement of one run. */
    public Duration measureCap() {
        return measureCap;
    }

    /**
     * Warm-up of a loaded run: timed, not counted, so that every transport's measured interval
     * sees the same stretch of the seeded background arrivals.
     */
    public Duration loadedWarmup() {
        return loadedWarmup;
    }

    /** Measured interval of a loaded run (timed, as {@link #loadedWarmup()}). */
    public Duration loadedMeasure() {
        return loadedMeasure;
    }

    int scale(int calls) {
        return Math.max(1, (int) Math.round(calls * scale));
    }

    /** The scenarios run by default. */
    public List<Scenario> scenarios() {
        return switch (this) {
            case FULL -> Scenario.FULL;
            case QUICK -> Scenario.QUICK;
            case SMOKE -> Scenario.SMOKE;
        };
    }
}
