package io.homa.grpc;

import io.homa.HomaConfig;
import io.homa.testing.DatagramFaults;
import io.homa.testing.FaultInjection;

import java.time.Duration;

/**
 * Homa configurations whose sockets drop datagrams at random (homa-netty's fault injector, for
 * tests). The only place this module's tests touch fault injection.
 */
final class LossyHoma {
    private LossyHoma() {
    }

    /** Loopback, dropping {@code rate} of outgoing DATA and control datagrams, seeded. */
    static HomaConfig dropping(double rate, long seed) {
        DatagramFaults drops = new DatagramFaults(rate, 0, 0, Duration.ZERO);
        return FaultInjection.inject(Transport.loopbackBuilder(), seed, drops, drops).build();
    }
}
