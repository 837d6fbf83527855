package io.homa.core.sim;

/**
 * Seeded faults applied to one class of packets (data or control) as they enter the switch:
 * drop, duplicate, and reorder (an extra random delay, so that later packets can overtake).
 */
public record FaultModel(double dropRate, double duplicateRate, double reorderRate, long reorderDelayMaxNanos) {
    /** No faults. */
    public static final FaultModel NONE = new FaultModel(0, 0, 0, 0);

    public FaultModel {
        check(dropRate, "dropRate");
        check(duplicateRate, "duplicateRate");
        check(reorderRate, "reorderRate");
        if (reorderDelayMaxNanos < 0) {
            throw new IllegalArgumentException("reorderDelayMaxNanos must be >= 0, was " + reorderDelayMaxNanos);
        }
    }

    private static void check(double p, String name) {
        if (!(p >= 0 && p <= 1)) {
            throw new IllegalArgumentException(name + " must be in [0, 1], was " + p);
        }
    }

    public boolean isNone() {
        return dropRate == 0 && duplicateRate == 0 && reorderRate == 0;
    }
}
