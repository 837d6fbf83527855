package io.homa.collective;

import io.homa.collective.internal.ArrayVectors;
import io.homa.collective.internal.BufferAccess;
import io.homa.collective.internal.ByteBufVector;
import io.homa.collective.internal.SyntheticVector;
import io.homa.collective.internal.Vector;
import io.netty.buffer.ByteBuf;

/**
 * The elements of one operation: the caller's array or {@link ByteBuf}, wrapped without copying.
 *
 * <p><b>Ownership:</b> the caller keeps the array or buffer. An operation reads and writes it in
 * place from the moment it is called until its future completes; do not read or change it in
 * between. A {@code ByteBuf} is never released by the library, and its reader and writer indexes
 * do not move: its readable bytes are the elements (a whole number of them, big-endian).
 */
public final class CollectiveBuffer {
    static {
        BufferAccess.install(b -> b.vector);
    }

    private final Vector vector;

    private CollectiveBuffer(Vector vector) {
        this.vector = vector;
    }

    public static CollectiveBuffer of(float[] data) {
        return new CollectiveBuffer(ArrayVectors.of(notNull(data)));
    }

    public static CollectiveBuffer of(double[] data) {
        return new CollectiveBuffer(ArrayVectors.of(notNull(data)));
    }

    public static CollectiveBuffer of(int[] data) {
        return new CollectiveBuffer(ArrayVectors.of(notNull(data)));
    }

    public static CollectiveBuffer of(long[] data) {
        return new CollectiveBuffer(ArrayVectors.of(notNull(data)));
    }

    /**
     * The readable bytes of {@code data} as elements of {@code type}.
     *
     * @throws IllegalArgumentException if an argument is null, the buffer is released, or its
     *         readable bytes are not a whole number of elements
     */
    public static CollectiveBuffer of(ByteBuf data, DataType type) {
        notNull(data);
        if (type == null) {
            throw new IllegalArgumentException("type must not be null");
        }
        if (data.refCnt() == 0) {
            throw new IllegalArgumentException("the buffer is released");
        }
        if (data.readableBytes() % type.bytes() != 0) {
            throw new IllegalArgumentException(data.readableBytes() + " readable bytes are not a whole number of "
                    + type + " elements (" + type.bytes() + " bytes each)");
        }
        return new CollectiveBuffer(new ByteBufVector(data, type));
    }

    /**
     * {@code elements} elements of {@code type} that hold no data: the operation sends zeros and
     * ignores what it receives. For simulations and benchmarks at sizes that need not fit in memory
     * twice; the schedule and the bytes on the wire are those of a real operation.
     *
     * @throws IllegalArgumentException if {@code type} is null or {@code elements} is negative
     */
    public static CollectiveBuffer synthetic(DataType type, int elements) {
        if (type == null || elements < 0) {
            throw new IllegalArgumentException("need a type and elements >= 0, not " + type + ", " + elements);
        }
        return new CollectiveBuffer(new SyntheticVector(type, elements));
    }

    /** The element type. */
    public DataType type() {
        return vector.type();
    }

    /** The number of elements. */
    public int elements() {
        return vector.elements();
    }

    private static <T> T notNull(T data) {
        if (data == null) {
            throw new IllegalArgumentException("data must not be null");
        }
        return data;
    }

    @Override
    public String toString() {
        return "CollectiveBuffer{" + vector.elements() + " x " + vector.type() + (vector.synthetic() ? ", synthetic" : "") + "}";
    }
}
