package io.homa.collective.internal;

import io.homa.collective.DataType;
import io.homa.collective.ReduceOp;
import io.netty.buffer.ByteBuf;

/** {@link Vector}s over Java arrays: the caller's array is read and written in place. */
public final class ArrayVectors {
    private ArrayVectors() {
    }

    public static Vector of(float[] a) {
        return new Floats(a);
    }

    public static Vector of(double[] a) {
        return new Doubles(a);
    }

    public static Vector of(int[] a) {
        return new Ints(a);
    }

    public static Vector of(long[] a) {
        return new Longs(a);
    }

    private record Floats(float[] a) implements Vector {
        public DataType type() { return DataType.FLOAT; }
        public int elements() { return a.length; }

        public void writeTo(ByteBuf out, int from, int count) {
            out.ensureWritable(count * 4);
            for (int i = from, end = from + count; i < end; i++) {
                out.writeFloat(a[i]);
            }
        }

        public void combine(ByteBuf in, int from, int count, ReduceOp op) {
            int r = in.readerIndex();
            int end = from + count;
            switch (op) {
                case SUM -> { for (int i = from; i < end; i++, r += 4) a[i] += in.getFloat(r); }
                case MIN -> { for (int i = from; i < end; i++, r += 4) a[i] = Math.min(a[i], in.getFloat(r)); }
                case MAX -> { for (int i = from; i < end; i++, r += 4) a[i] = Math.max(a[i], in.getFloat(r)); }
            }
            in.skipBytes(count * 4);
        }

        public void copyFrom(ByteBuf in, int from, int count) {
            for (int i = from, end = from + count; i < end; i++) {
                a[i] = in.readFloat();
            }
        }
    }

    private record Doubles(double[] a) implements Vector {
        public DataType type() { return DataType.DOUBLE; }
        public int elements() { return a.length; }

        public void writeTo(ByteBuf out, int from, int count) {
            out.ensureWritable(count * 8);
            for (int i = from, end = from + count; i < end; i++) {
                out.writeDouble(a[i]);
            }
        }

        public void combine(ByteBuf in, int from, int count, ReduceOp op) {
            int r = in.readerIndex();
            int end = from + count;
            switch (op) {
                case SUM -> { for (int i = from; i < end; i++, r += 8) a[i] += in.getDouble(r); }
                case MIN -> { for (int i = from; i < end; i++, r += 8) a[i] = Math.min(a[i], in.getDouble(r)); }
                case MAX -> { for (int i = from; i < end; i++, r += 8) a[i] = Math.max(a[i], in.getDouble(r)); }
            }
            in.skipBytes(count * 8);
        }

        public void copyFrom(ByteBuf in, int from, int count) {
            for (int i = from, end = from + count; i < end; i++) {
                a[i] = in.readDouble();
            }
        }
    }

    private record Ints(int[] a) implements Vector {
        public DataType type() { return DataType.INT; }
        public int elements() { return a.length; }

        public void writeTo(ByteBuf out, int from, int count) {
            out.ensureWritable(count * 4);
            for (int i = from, end = from + count; i < end; i++) {
                out.writeInt(a[i]);
            }
        }

        public void combine(ByteBuf in, int from, int count, ReduceOp op) {
            int r = in.readerIndex();
            int end = from + count;
            switch (op) {
                case SUM -> { for (int i = from; i < end; i++, r += 4) a[i] += in.getInt(r); }
                case MIN -> { for (int i = from; i < end; i++, r += 4) a[i] = Math.min(a[i], in.getInt(r)); }
                case MAX -> { for (int i = from; i < end; i++, r += 4) a[i] = Math.max(a[i], in.getInt(r)); }
            }
            in.skipBytes(count * 4);
        }

        public void copyFrom(ByteBuf in, int from, int count) {
            for (int i = from, end = from + count; i < end; i++) {
                a[i] = in.readInt();
            }
        }
    }

    private record Longs(long[] a) implements Vector {
        public DataType type() { return DataType.LONG; }
        public int elements() { return a.length; }

        public void writeTo(ByteBuf out, int from, int count) {
            out.ensureWritable(count * 8);
            for (int i = from, end = from + count; i < end; i++) {
                out.writeLong(a[i]);
            }
        }

        public void combine(ByteBuf in, int from, int count, ReduceOp op) {
            int r = in.readerIndex();
            int end = from + count;
            switch (op) {
                case SUM -> { for (int i = from; i < end; i++, r += 8) a[i] += in.getLong(r); }
                case MIN -> { for (int i = from; i < end; i++, r += 8) a[i] = Math.min(a[i], in.getLong(r)); }
                case MAX -> { for (int i = from; i < end; i++, r += 8) a[i] = Math.max(a[i], in.getLong(r)); }
            }
            in.skipBytes(count * 8);
        }

        public void copyFrom(ByteBuf in, int from, int count) {
            for (int i = from, end = from + count; i < end; i++) {
                a[i] = in.readLong();
            }
        }
    }
}
