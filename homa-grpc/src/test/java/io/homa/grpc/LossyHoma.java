package io.homa.grpc;

import io.homa.HomaConfig;
import io.homa.core.sim.FaultModel;

/**
 * Homa configurations whose sockets drop datagrams at random (homa-netty's fault injector, for
 * tests). The only place this module's tests touch fault injection.
 */
final class LossyHoma {
    private LossyHoma() {
    }

    /** Loopback, dropping {@code rate} of outgoing DATA and control datagrams, seeded. */
    static HomaConfig dropping(double rate, long seed) {
        FaultModel drops = new FaultModel(rate, 0, 0, 0);
        return Transport.loopbackBuilder().faultInjection(seed, drops, drops).build();
    }
}
