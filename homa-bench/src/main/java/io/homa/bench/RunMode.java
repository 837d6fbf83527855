package io.homa.bench;

import java.time.Duration;
import java.util.List;

/**
 * How long {@code compare} measures: repetitions, call counts and the time caps that bound every
 * run whatever the machine's speed; loaded runs are timed (warm-up and measurement of fixed
 * length). Worst case (every run hitting its caps) with the seven default transports (homa-2loops
 * in the throughput scenarios only, warmed up with homa): FULL 6 x 3 s of JIT warm-up, 35 runs x
 * 5 repetitions x 1.6 s and 10 loaded runs x 5 x 3.4 s = 468 s, shrunk to the budget of 290 s;
 * QUICK 6 x 2 s, 22 x 3 x 1.3 s and 5 x 3 x 2.3 s = 132 s, shrunk to 90 s
 * (plus, per run, the setup and, per loaded run, the wait for its first background call). The
 * budget guard shrinks the caps of the remaining runs when the command falls behind
 * {@link #budget()}.
 */
public enum RunMode {
    FULL(5, 1.0, Duration.ofMillis(400), Duration.ofMillis(1200), Duration.ofMillis(400), Duration.ofMillis(3000),
            Duration.ofSeconds(3), Duration.ofSeconds(290)),
    QUICK(3, 0.5, Duration.ofMillis(300), Duration.ofMillis(1000), Duration.ofMillis(300), Duration.ofMillis(2000),
            Duration.ofSeconds(2), Duration.ofSeconds(90)),
    /** A few hundred calls in all: checks that everything works (the tests run it). */
    SMOKE(1, 0.0, Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofMillis(200), Duration.ofMillis(500),
            Duration.ZERO, Duration.ofSeconds(3600));

    private final int repetitions;
    private final double scale;
    private final Duration warmupCap;
    private final Duration measureCap;
    private final Duration loadedWarmup;
    private final Duration loadedMeasure;
    private final Duration jitWarmup;
    private final Duration budget;

    RunMode(int repetitions, double scale, Duration warmupCap, Duration measureCap, Duration loadedWarmup,
            Duration loadedMeasure, Duration jitWarmup, Duration budget) {
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
     * Time for all runs: when the runs fall behind it (a slow or busy machine), the next runs'
     * caps shrink (down to a tenth) so that the whole command still ends in time.
     */
    public Duration budget() {
        return budget;
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
