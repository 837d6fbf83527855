package io.homa.collective.internal;

import io.homa.collective.DataType;
import io.homa.collective.ReduceOp;
import io.netty.buffer.ByteBuf;

/**
 * The elements an operation works on, addressed by element index: what the schedule's transfers
 * read (to send) and write (combining or copying what arrived). Callers hold the operation's lock.
 */
public interface Vector {
    DataType type();

    int elements();

    /** A vector of lengths only (simulations): sends zeros, ignores what arrives. */
    default boolean synthetic() {
        return false;
    }

    /** Appends elements {@code [from, from + count)} to {@code out}. */
    void writeTo(ByteBuf out, int from, int count);

    /** Combines {@code count} elements read from {@code in} into {@code [from, from + count)}. */
    void combine(ByteBuf in, int from, int count, ReduceOp op);

    /** Overwrites {@code [from, from + count)} with {@code count} elements read from {@code in}. */
    void copyFrom(ByteBuf in, int from, int count);
}
