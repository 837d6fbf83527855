package io.homa.testing;

import io.homa.HomaBadArgumentException;
import io.homa.core.sim.FaultModel;

import java.time.Duration;

/**
 * The faults {@link FaultInjection} applies to one class of outgoing datagrams (DATA, or control:
 * everything else): each datagram is dropped with probability {@code dropRate}, else sent twice
 * with probability {@code duplicateRate}, else delayed by up to {@code reorderDelayMax} with
 * probability {@code reorderRate} so that later datagrams overtake it. Immutable.
 *
 * @param dropRate      probability in [0, 1]
 * @param duplicateRate probability in [0, 1]
 * @param reorderRate   probability in [0, 1]
 * @param reorderDelayMax longest delay of a reordered datagram (at least 1 µs is used)
 */
public record DatagramFaults(double dropRate, double duplicateRate, double reorderRate, Duration reorderDelayMax) {
    /** No faults. */
    public static final DatagramFaults NONE = new DatagramFaults(0, 0, 0, Duration.ZERO);

    /**
     * @throws HomaBadArgumentException if a rate is outside [0, 1] or the delay is null or negative
     */
    public DatagramFaults {
        model(dropRate, duplicateRate, reorderRate, reorderDelayMax); // validates
    }

    /** The simulator's model of the same faults, which the shell's injector draws from. */
    FaultModel model() {
        return model(dropRate, duplicateRate, reorderRate, reorderDelayMax);
    }

    private static FaultModel model(double drop, double duplicate, double reorder, Duration delayMax) {
        if (delayMax == null) {
            throw new HomaBadArgumentException("reorderDelayMax must not be null (use Duration.ZERO)");
        }
        try {
            return new FaultModel(drop, duplicate, reorder, delayMax.toNanos());
        } catch (IllegalArgumentException e) {
            throw new HomaBadArgumentException(e.getMessage(), e);
        }
    }
}
