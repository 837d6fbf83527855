package io.homa.collective.internal;

import io.homa.collective.DataType;
import io.homa.collective.ReduceOp;
import io.netty.buffer.ByteBuf;

/**
 * Lengths without data, for simulations at scale: sends zeros (written, so that the bytes cross the
 * network) and ignores what arrives.
 */
public final class SyntheticVector implements Vector {
    private final DataType type;
    private final int elements;

    public SyntheticVector(DataType type, int elements) {
        this.type = type;
        this.elements = elements;
    }

    @Override
    public DataType type() {
        return type;
    }

    @Override
    public int elements() {
        return elements;
    }

    @Override
    public boolean synthetic() {
        return true;
    }

    @Override
    public void writeTo(ByteBuf out, int from, int count) {
        out.writeZero(count * type.bytes());
    }

    @Override
    public void combine(ByteBuf in, int from, int count, ReduceOp op) {
        in.skipBytes(Math.min(in.readableBytes(), count * type.bytes()));
    }

    @Override
    public void copyFrom(ByteBuf in, int from, int count) {
        in.skipBytes(Math.min(in.readableBytes(), count * type.bytes()));
    }
}
