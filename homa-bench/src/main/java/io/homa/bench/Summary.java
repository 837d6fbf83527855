package io.homa.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * The repetitions of one transport in one scenario, summarised: each figure is the median of the
 * counted repetitions' figures (so p99 is the median of the repetitions' p99s). A repetition
 * counts when it succeeded and the JIT was quiet in it ({@link RunResult#steady()}); one that
 * succeeded while the JIT was still compiling, after compare's retries, is {@code unsteady}: kept
 * out of every figure, and only counted.
 *
 * @param succeeded the counted repetitions (successful and steady)
 * @param unsteady  the successful repetitions not counted because the JIT was compiling in them
 */
public record Summary(String transport, Scenario scenario, int repetitions, int succeeded, int unsteady,
                      double p50us, double p99us, double p999us, double maxUs, double meanUs, double samples,
                      double callsPerSecond, double gbitPerSecond, double backgroundGbit,
                      double backgroundOfferedGbit, int backgroundCarriedRepetitions,
                      double cpuUsPerCall, double allocBytesPerCall, double cpuCores,
                      List<Double> p99PerRepetition, List<RunResult> okRuns, String error, double jitMs) {

    /** The summary under compare's steady-state rule: unsteady repetitions are not counted. */
    public static Summary of(String transport, Scenario scenario, List<RunResult> runs) {
        return of(transport, scenario, runs, true);
    }

    /**
     * The summary of {@code runs}; with {@code steadyRule} false (smoke runs, the sweep: neither
     * runs a repetition again) every successful repetition counts, the JIT quiet or not.
     */
    public static Summary of(String transport, Scenario scenario, List<RunResult> runs, boolean steadyRule) {
        List<RunResult> ok = new ArrayList<>();
        String error = null;
        int unsteady = 0;
        for (RunResult r : runs) {
            if (r.ok() && (r.steady() || !steadyRule)) {
                ok.add(r);
            } else if (r.ok()) {
                unsteady++;
            } else if (error == null) {
                error = r.error();
            }
        }
        List<Double> p99s = new ArrayList<>();
        for (RunResult r : ok) {
            p99s.add(r.stats().p99us());
        }
        int carried = 0;
        for (RunResult r : ok) {
            carried += r.background() == null || r.background().carried() ? 1 : 0;
        }
        return new Summary(transport, scenario, runs.size(), ok.size(), unsteady,
                median(ok, r -> r.stats().p50us()), median(ok, r -> r.stats().p99us()),
                median(ok, r -> r.stats().p999us()), median(ok, r -> r.stats().maxUs()),
                median(ok, r -> r.stats().meanUs()), median(ok, r -> r.stats().samples()),
                median(ok, RunResult::callsPerSecond), median(ok, RunResult::gbitPerSecond),
                median(ok, RunResult::backgroundGbit),
                median(ok, r -> r.background() == null ? Double.NaN : r.background().offeredGbit()), carried,
                median(ok, RunResult::cpuUsPerCall), median(ok, RunResult::allocBytesPerCall),
                median(ok, RunResult::cpuCores), p99s, List.copyOf(ok), error, median(ok, RunResult::jitMs));
    }

    /** Successful repetitions not counted because the JIT was still compiling in them (after compare's retries). */
    public int unsteadyRepetitions() {
        return unsteady;
    }

    /** Repetitions that failed (an error, not the JIT). */
    public int failedRepetitions() {
        return repetitions - succeeded - unsteady;
    }

    /**
     * The spread of {@code metric}'s ratio to {@code other}'s over the repetitions: the repetitions
     * are paired by index (the same repetition of both ran back to back); {@code [min, max]}, or
     * null when no pair was measured.
     */
    public double[] ratioRange(Summary other, ToDoubleFunction<RunResult> metric) {
        double lo = Double.POSITIVE_INFINITY;
        double hi = Double.NEGATIVE_INFINITY;
        for (RunResult a : okRuns) {
            for (RunResult b : other.okRuns) {
                if (a.repetition() == b.repetition()) {
                    double v = metric.applyAsDouble(a) / metric.applyAsDouble(b);
                    if (Double.isFinite(v)) {
                        lo = Math.min(lo, v);
                        hi = Math.max(hi, v);
                    }
                }
            }
        }
        return lo <= hi ? new double[] {lo, hi} : null;
    }

    /**
     * Whether the background was carried (see {@link PoissonLoad.Interval#carried()}) in most of
     * the successful repetitions; always true without background.
     */
    public boolean backgroundCarried() {
        return 2 * backgroundCarriedRepetitions > succeeded;
    }

    /** Whether at least one repetition succeeded. */
    public boolean measured() {
        return succeeded > 0;
    }

    static double median(List<RunResult> runs, ToDoubleFunction<RunResult> f) {
        double[] v = runs.stream().mapToDouble(f).filter(Double::isFinite).toArray();
        return median(v);
    }

    static double median(double[] v) {
        if (v.length == 0) {
            return Double.NaN;
        }
        double[] s = v.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }
}
