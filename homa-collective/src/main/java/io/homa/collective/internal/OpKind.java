package io.homa.collective.internal;

/** The operation a message belongs to (its wire code is the ordinal). */
public enum OpKind {
    ALL_REDUCE("all-reduce"),
    REDUCE_SCATTER("reduce-scatter"),
    ALL_GATHER("all-gather"),
    BROADCAST("broadcast"),
    BARRIER("barrier");

    private final String label;

    OpKind(String label) {
        this.label = label;
    }

    @Override
    public String toString() {
        return label;
    }
}
