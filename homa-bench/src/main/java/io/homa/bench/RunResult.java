package io.homa.bench;

/**
 * One measured run: a transport in a scenario, one repetition.
 *
 * @param stats             latency percentiles of the measured calls (probe calls when loaded)
 * @param callsPerSecond    measured calls completed per second of measurement
 * @param gbitPerSecond     request payload carried per second (each way), in Gbit/s
 * @param background        for loaded scenarios, the background of the measured interval (else null)
 * @param cpuUsPerCall      process CPU time over the measured interval per completed call (probe
 *                          and background calls), microseconds
 * @param allocBytesPerCall bytes allocated by all JVM threads over the measured interval per
 *                          completed call
 * @param cpuCores          process CPU time over wall time in the measured interval
 * @param error             why the run failed, or {@code null}
 * @param jitMs             the JIT's compilation time in the measured interval, ms (NaN unknown)
 * @param measuredSeconds   the measured interval (NaN unknown)
 */
public record RunResult(String transport, Scenario scenario, int repetition, LatencyStats stats,
                        double callsPerSecond, double gbitPerSecond, PoissonLoad.Interval background,
                        double cpuUsPerCall, double allocBytesPerCall, double cpuCores,
                        double seconds, String error, double jitMs, double measuredSeconds) {
    /** A run whose measured interval is not known (its share of JIT time then cannot be judged). */
    public RunResult(String transport, Scenario scenario, int repetition, LatencyStats stats, double callsPerSecond,
                     double gbitPerSecond, PoissonLoad.Interval background, double cpuUsPerCall, double allocBytesPerCall,
                     double cpuCores, double seconds, String error, double jitMs) {
        this(transport, scenario, repetition, stats, callsPerSecond, gbitPerSecond, background, cpuUsPerCall,
                allocBytesPerCall, cpuCores, seconds, error, jitMs, Double.NaN);
    }

    /**
     * Whether the JIT was quiet in the measured interval: it compiled for less than
     * {@link #MAX_JIT_SHARE} of it (compare counts only such repetitions; see docs/benchmarks.md,
     * "Steady state"). A failed run, or one whose JIT time or interval is unknown, is not judged.
     */
    public boolean steady() {
        return !ok() || !(jitMs >= 0) || !(measuredSeconds > 0) || jitMs < MAX_JIT_SHARE * measuredSeconds * 1000;
    }

    /** The JIT's compilation time over the measured interval (NaN where unknown). */
    public double jitShare() {
        return jitMs >= 0 && measuredSeconds > 0 ? jitMs / (measuredSeconds * 1000) : Double.NaN;
    }

    /** The most of a measured interval the JIT may spend compiling for the repetition to count: 2%. */
    public static final double MAX_JIT_SHARE = 0.02;

    public boolean ok() {
        return error == null;
    }

    /** The background's achieved Gbit/s, NaN when there was none. */
    public double backgroundGbit() {
        return background == null ? Double.NaN : background.achievedGbit();
    }
}
