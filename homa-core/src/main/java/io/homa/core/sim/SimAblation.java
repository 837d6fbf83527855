package io.homa.core.sim;

import io.homa.core.EngineConfig;

/**
 * The runs that show what each of Homa's mechanisms buys: the same topology and traffic with one
 * mechanism taken away.
 */
public enum SimAblation {
    /** Homa as configured. */
    NONE("homa"),
    /** One priority level: every switch port a single FIFO. */
    ONE_PRIORITY("one-priority"),
    /** Messages in arrival order instead of shortest remaining first. */
    FIFO("fifo"),
    /** One granted message per receiver at a time. */
    NO_OVERCOMMIT("no-overcommit");

    public final String label;

    SimAblation(String label) {
        this.label = label;
    }

    public DatacenterTopology topology(DatacenterTopology base) {
        return this == ONE_PRIORITY ? base.toBuilder().priorityLevels(1).build() : base;
    }

    public EngineConfig engine(EngineConfig base) {
        return switch (this) {
            case FIFO -> fifoScheduling(base.toBuilder()).build();
            case NO_OVERCOMMIT -> base.toBuilder().maxOvercommit(1).build();
            default -> base;
        };
    }

    /**
     * FIFO everywhere: receivers grant in arrival order, senders send in arrival order, no pacer,
     * unscheduled data at the lowest level (no cutoffs).
     */
    static EngineConfig.Builder fifoScheduling(EngineConfig.Builder b) {
        return b.fifoBaselineForTests().fifoGrantOrderForTests(true);
    }

    /** The ablation named {@code label} (as printed), e.g. "fifo". */
    public static SimAblation byLabel(String label) {
        for (SimAblation a : values()) {
            if (a.label.equals(label)) {
                return a;
            }
        }
        throw new IllegalArgumentException("unknown ablation '" + label + "': expected homa, one-priority, fifo or no-overcommit");
    }
}
