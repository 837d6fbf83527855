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
 */
public record RunResult(String transport, Scenario scenario, int repetition, LatencyStats stats,
                        double callsPerSecond, double gbitPerSecond, PoissonLoad.Interval background,
                        double cpuUsPerCall, double allocBytesPerCall, double cpuCores,
                        double seconds, String error, double jitMs) {
    public boolean ok() {
        return error == null;
    }

    /** The background's achieved Gbit/s, NaN when there was none. */
    public double backgroundGbit() {
        return background == null ? Double.NaN : background.achievedGbit();
    }
}
