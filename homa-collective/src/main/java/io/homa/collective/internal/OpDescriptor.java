package io.homa.collective.internal;

import io.homa.collective.Algorithm;
import io.homa.collective.DataType;
import io.homa.collective.ReduceOp;

/**
 * What every rank of an operation must agree on: compared against each message, so that ranks
 * that called different things fail with a message that says what differs.
 */
public record OpDescriptor(OpKind kind, DataType type, ReduceOp op, int elements, int root, Algorithm algorithm) {
    /** What differs between {@code this} (this rank's) and {@code other} (a peer's), or null. */
    String difference(OpDescriptor other, int peer) {
        if (equals(other)) {
            return null;
        }
        return "rank " + peer + " runs " + other.describe() + "; this rank runs " + describe();
    }

    String describe() {
        StringBuilder s = new StringBuilder().append(kind);
        if (kind != OpKind.BARRIER) {
            s.append(" of ").append(elements).append(' ').append(type).append(" elements");
        }
        if (kind == OpKind.ALL_REDUCE || kind == OpKind.REDUCE_SCATTER) {
            s.append(" (").append(op).append(')');
        }
        if (kind == OpKind.BROADCAST) {
            s.append(" from root ").append(root);
        }
        if (kind == OpKind.ALL_REDUCE) {
            s.append(" by ").append(algorithm);
        }
        return s.toString();
    }
}
