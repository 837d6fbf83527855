package io.homa.testing;

import io.homa.HomaBadArgumentException;
import io.homa.HomaConfig;
import io.homa.internal.ShellAccess;

/**
 * Fault injection on real sockets, for tests: kept out of {@code io.homa} as Aeron keeps its loss
 * generators out of its driver's API. A socket opened with such a configuration drops, duplicates
 * and delays its outgoing datagrams at random, seeded, with separate {@link DatagramFaults} for DATA
 * and control datagrams; every segment then leaves in a datagram of its own (no GSO batching).
 * Counted in {@code HomaMetrics.Shell.FAULTS_*}. Without it the send path pays one null check per
 * transmit.
 *
 * <pre>{@code
 * DatagramFaults lossy = new DatagramFaults(0.05, 0.01, 0.01, Duration.ofMillis(2));
 * HomaSocket s = HomaSocket.open(FaultInjection.inject(HomaConfig.builder(), 42, lossy, lossy).build());
 * }</pre>
 */
public final class FaultInjection {
    private FaultInjection() {
    }

    /**
     * Turns fault injection on in {@code config} (replacing earlier faults) and returns it. Each
     * event loop of the socket draws from its own generator, seeded from {@code seed}.
     *
     * @throws HomaBadArgumentException if an argument is null
     */
    public static HomaConfig.Builder inject(HomaConfig.Builder config, long seed, DatagramFaults data,
                                            DatagramFaults control) {
        if (config == null || data == null || control == null) {
            throw new HomaBadArgumentException("config, data and control must not be null (use DatagramFaults.NONE)");
        }
        ShellAccess.faultInjection().set(config, seed, data.model(), control.model());
        return config;
    }
}
