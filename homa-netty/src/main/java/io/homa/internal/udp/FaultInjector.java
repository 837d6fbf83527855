package io.homa.internal.udp;

import io.homa.core.sim.FaultModel;

import java.util.SplittableRandom;

/**
 * Seeded faults for outgoing datagrams on a real socket, for tests (the Aeron
 * {@code LossGenerator} pattern), configured through {@code io.homa.testing.FaultInjection}: each
 * datagram is dropped, sent twice, or delayed so that later ones overtake it, with the
 * probabilities of the {@link FaultModel} for its class (DATA or control). The shell creates one only when faults are configured, so production sends never
 * pay for it. Confined to one event loop.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class FaultInjector {
    /** What to do with one datagram. */
    enum Action { SEND, DROP, DUPLICATE, DELAY }

    private final FaultModel data;
    private final FaultModel control;
    private final SplittableRandom random;

    public FaultInjector(long seed, FaultModel data, FaultModel control) {
        this.data = data;
        this.control = control;
        this.random = new SplittableRandom(seed);
    }

    /** Decides the fate of one datagram. */
    Action decide(boolean isData) {
        FaultModel m = isData ? data : control;
        if (m.isNone()) {
            return Action.SEND;
        }
        double r = random.nextDouble();
        if (r < m.dropRate()) {
            return Action.DROP;
        }
        r -= m.dropRate();
        if (r < m.duplicateRate()) {
            return Action.DUPLICATE;
        }
        r -= m.duplicateRate();
        if (r < m.reorderRate()) {
            return Action.DELAY;
        }
        return Action.SEND;
    }

    /** The delay of a datagram chosen for {@link Action#DELAY}, in ns (at least 1 µs). */
    long delayNanos(boolean isData) {
        long max = (isData ? data : control).reorderDelayMaxNanos();
        return max <= 1_000 ? 1_000 : 1_000 + random.nextLong(max - 1_000);
    }
}
