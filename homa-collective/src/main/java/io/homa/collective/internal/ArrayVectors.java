package io.homa.collective.internal;

import io.homa.collective.DataType;
import io.homa.collective.ReduceOp;
import io.netty.buffer.ByteBuf;

import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;

/**
 * {@link Vector}s over Java arrays: the caller's array is read and written in place. Elements move
 * in bulk through NIO views of the message's memory (big-endian, as on the wire), and arriving
 * segments are combined a chunk at a time from a small scratch array (a loop the JIT vectorizes).
 */
public final class ArrayVectors {
    private static final int CHUNK = 2048;

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
            int bytes = count * 4;
            out.ensureWritable(bytes);
            out.nioBuffer(out.writerIndex(), bytes).asFloatBuffer().put(a, from, count);
            out.writerIndex(out.writerIndex() + bytes);
        }

        public void combine(ByteBuf in, int from, int count, ReduceOp op) {
            FloatBuffer src = in.nioBuffer(in.readerIndex(), count * 4).asFloatBuffer();
            float[] tmp = new float[Math.min(count, CHUNK)];
            for (int done = 0; done < count; done += tmp.length) {
                int n = Math.min(tmp.length, count - done);
                src.get(tmp, 0, n);
                int base = from + done;
                switch (op) {
                    case SUM -> { for (int i = 0; i < n; i++) a[base + i] += tmp[i]; }
                    case MIN -> { for (int i = 0; i < n; i++) a[base + i] = Math.min(a[base + i], tmp[i]); }
                    case MAX -> { for (int i = 0; i < n; i++) a[base + i] = Math.max(a[base + i], tmp[i]); }
                }
            }
            in.skipBytes(count * 4);
        }

        public void copyFrom(ByteBuf in, int from, int count) {
            in.nioBuffer(in.readerIndex(), count * 4).asFloatBuffer().get(a, from, count);
            in.skipBytes(count * 4);
        }
    }

    private record Doubles(double[] a) implements Vector {
        public DataType type() { return DataType.DOUBLE; }
        public int elements() { return a.length; }

        public void writeTo(ByteBuf out, int from, int count) {
            int bytes = count * 8;
            out.ensureWritable(bytes);
            out.nioBuffer(out.writerIndex(), bytes).asDoubleBuffer().put(a, from, count);
            out.writerIndex(out.writerIndex() + bytes);
        }

        public void combine(ByteBuf in, int from, int count, ReduceOp op) {
            DoubleBuffer src = in.nioBuffer(in.readerIndex(), count * 8).asDoubleBuffer();
            double[] tmp = new double[Math.min(count, CHUNK)];
            for (int done = 0; done < count; done += tmp.length) {
                int n = Math.min(tmp.length, count - done);
                src.get(tmp, 0, n);
                int base = from + done;
                switch (op) {
                    case SUM -> { for (int i = 0; i < n; i++) a[base + i] += tmp[i]; }
                    case MIN -> { for (int i = 0; i < n; i++) a[base + i] = Math.min(a[base + i], tmp[i]); }
                    case MAX -> { for (int i = 0; i < n; i++) a[base + i] = Math.max(a[base + i], tmp[i]); }
                }
            }
            in.skipBytes(count * 8);
        }

        public void copyFrom(ByteBuf in, int from, int count) {
            in.nioBuffer(in.readerIndex(), count * 8).asDoubleBuffer().get(a, from, count);
            in.skipBytes(count * 8);
        }
    }

    private record Ints(int[] a) implements Vector {
        public DataType type() { return DataType.INT; }
        public int elements() { return a.length; }

        public void writeTo(ByteBuf out, int from, int count) {
            int bytes = count * 4;
            out.ensureWritable(bytes);
            out.nioBuffer(out.writerIndex(), bytes).asIntBuffer().put(a, from, count);
            out.writerIndex(out.writerIndex() + bytes);
        }

        public void combine(ByteBuf in, int from, int count, ReduceOp op) {
            IntBuffer src = in.nioBuffer(in.readerIndex(), count * 4).asIntBuffer();
            int[] tmp = new int[Math.min(count, CHUNK)];
            for (int done = 0; done < count; done += tmp.length) {
                int n = Math.min(tmp.length, count - done);
                src.get(tmp, 0, n);
                int base = from + done;
                switch (op) {
                    case SUM -> { for (int i = 0; i < n; i++) a[base + i] += tmp[i]; }
                    case MIN -> { for (int i = 0; i < n; i++) a[base + i] = Math.min(a[base + i], tmp[i]); }
                    case MAX -> { for (int i = 0; i < n; i++) a[base + i] = Math.max(a[base + i], tmp[i]); }
                }
            }
            in.skipBytes(count * 4);
        }

        public void copyFrom(ByteBuf in, int from, int count) {
            in.nioBuffer(in.readerIndex(), count * 4).asIntBuffer().get(a, from, count);
            in.skipBytes(count * 4);
        }
    }

    private record Longs(long[] a) implements Vector {
        public DataType type() { return DataType.LONG; }
        public int elements() { return a.length; }

        public void writeTo(ByteBuf out, int from, int count) {
            int bytes = count * 8;
            out.ensureWritable(bytes);
            out.nioBuffer(out.writerIndex(), bytes).asLongBuffer().put(a, from, count);
            out.writerIndex(out.writerIndex() + bytes);
        }

        public void combine(ByteBuf in, int from, int count, ReduceOp op) {
            LongBuffer src = in.nioBuffer(in.readerIndex(), count * 8).asLongBuffer();
            long[] tmp = new long[Math.min(count, CHUNK)];
            for (int done = 0; done < count; done += tmp.length) {
                int n = Math.min(tmp.length, count - done);
                src.get(tmp, 0, n);
                int base = from + done;
                switch (op) {
                    case SUM -> { for (int i = 0; i < n; i++) a[base + i] += tmp[i]; }
                    case MIN -> { for (int i = 0; i < n; i++) a[base + i] = Math.min(a[base + i], tmp[i]); }
                    case MAX -> { for (int i = 0; i < n; i++) a[base + i] = Math.max(a[base + i], tmp[i]); }
                }
            }
            in.skipBytes(count * 8);
        }

        public void copyFrom(ByteBuf in, int from, int count) {
            in.nioBuffer(in.readerIndex(), count * 8).asLongBuffer().get(a, from, count);
            in.skipBytes(count * 8);
        }
    }
}
