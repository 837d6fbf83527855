package io.homa.bench;

/**
 * One measured run: a transport in a scenario, one repetition.
 *
 * @param stats              latency percentiles of the measured calls (probe calls when loaded)
 * @param callsPerSecond     measured calls completed per second of measurement
 * @param gbitPerSecond      request payload carried per second (each way), in Gbit/s
 * @param backgroundGbit     for loaded scenarios, the background load's payload Gbit/s (else NaN)
 * @param error              why the run failed, or {@code null}
 */
public record RunResult(String transport, Scenario scenario, int repetition, LatencyStats stats,
                        double callsPerSecond, double gbitPerSecond, double backgroundGbit,
                        double seconds, String error) {
    public boolean ok() {
        return error == null;
    }
}
