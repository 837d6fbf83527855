package io.homa.collective.internal;

import io.homa.collective.DataType;
import io.homa.collective.ReduceOp;
import io.netty.buffer.ByteBuf;

/**
 * A {@link Vector} over the readable bytes of the caller's {@link ByteBuf} (big-endian elements),
 * read and written in place by absolute index: the buffer's indexes do not move and it is never
 * released here.
 */
public final class ByteBufVector implements Vector {
    private final ByteBuf buf;
    private final int base;
    private final DataType type;
    private final int size;
    private final int elements;

    public ByteBufVector(ByteBuf buf, DataType type) {
        this.buf = buf;
        this.base = buf.readerIndex();
        this.type = type;
        this.size = type.bytes();
        this.elements = buf.readableBytes() / size;
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
    public void writeTo(ByteBuf out, int from, int count) {
        out.writeBytes(buf, base + from * size, count * size);
    }

    @Override
    public void copyFrom(ByteBuf in, int from, int count) {
        in.readBytes(buf, base + from * size, count * size);
    }

    @Override
    public void combine(ByteBuf in, int from, int count, ReduceOp op) {
        int r = in.readerIndex();
        int w = base + from * size;
        int end = w + count * size;
        switch (type) {
            case FLOAT -> {
                for (; w < end; w += 4, r += 4) {
                    float a = buf.getFloat(w);
                    float b = in.getFloat(r);
                    buf.setFloat(w, op == ReduceOp.SUM ? a + b : op == ReduceOp.MIN ? Math.min(a, b) : Math.max(a, b));
                }
            }
            case DOUBLE -> {
                for (; w < end; w += 8, r += 8) {
                    double a = buf.getDouble(w);
                    double b = in.getDouble(r);
                    buf.setDouble(w, op == ReduceOp.SUM ? a + b : op == ReduceOp.MIN ? Math.min(a, b) : Math.max(a, b));
                }
            }
            case INT -> {
                for (; w < end; w += 4, r += 4) {
                    int a = buf.getInt(w);
                    int b = in.getInt(r);
                    buf.setInt(w, op == ReduceOp.SUM ? a + b : op == ReduceOp.MIN ? Math.min(a, b) : Math.max(a, b));
                }
            }
            case LONG -> {
                for (; w < end; w += 8, r += 8) {
                    long a = buf.getLong(w);
                    long b = in.getLong(r);
                    buf.setLong(w, op == ReduceOp.SUM ? a + b : op == ReduceOp.MIN ? Math.min(a, b) : Math.max(a, b));
                }
            }
        }
        in.skipBytes(count * size);
    }
}
