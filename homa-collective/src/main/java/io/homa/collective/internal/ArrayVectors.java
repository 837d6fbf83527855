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

    /**
     * The next {@code bytes} readable bytes as NIO views without a copy: one per component of a
     * composite (a Homa message assembled in 64 KiB chunks) when every component holds whole
     * elements, else one merged view (which copies).
     */
    static java.nio.ByteBuffer[] parts(ByteBuf in, int bytes, int elementSize) {
        java.nio.ByteBuffer[] parts = in.nioBuffers(in.readerIndex(), bytes);
        for (java.nio.ByteBuffer b : parts) {
            if (b.remaining() % elementSize != 0) {
                return new java.nio.ByteBuffer[]{in.nioBuffer(in.readerIndex(), bytes)};
            }
        }
        return parts;
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
            float[] tmp = new float[Math.min(Math.max(count, 1), CHUNK)];
            int done = 0;
            for (java.nio.ByteBuffer part : parts(in, count * 4, 4)) {
                FloatBuffer src = part.asFloatBuffer();
                while (src.hasRemaining()) {
                    int n = Math.min(tmp.length, src.remaining());
                    src.get(tmp, 0, n);
                    int base = from + done;
                    switch (op) {
                        case SUM -> { for (int i = 0; i < n; i++) a[base + i] += tmp[i]; }
                        case MIN -> { for (int i = 0; i < n; i++) a[base + i] = Math.min(a[base + i], tmp[i]); }
                        case MAX -> { for (int i = 0; i < n; i++) a[base + i] = Math.max(a[base + i], tmp[i]); }
                    }
                    done += n;
                }
            }
            in.skipBytes(count * 4);
        }

        public void copyFrom(ByteBuf in, int from, int count) {
            int at = from;
            for (java.nio.ByteBuffer part : parts(in, count * 4, 4)) {
                FloatBuffer src = part.asFloatBuffer();
                int n = src.remaining();
                src.get(a, at, n);
                at += n;
            }
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
            double[] tmp = new double[Math.min(Math.max(count, 1), CHUNK)];
            int done = 0;
            for (java.nio.ByteBuffer part : parts(in, count * 8, 8)) {
                DoubleBuffer src = part.asDoubleBuffer();
                while (src.hasRemaining()) {
                    int n = Math.min(tmp.length, src.remaining());
                    src.get(tmp, 0, n);
                    int base = from + done;
                    switch (op) {
                        case SUM -> { for (int i = 0; i < n; i++) a[base + i] += tmp[i]; }
                        case MIN -> { for (int i = 0; i < n; i++) a[base + i] = Math.min(a[base + i], tmp[i]); }
                        case MAX -> { for (int i = 0; i < n; i++) a[base + i] = Math.max(a[base + i], tmp[i]); }
                    }
                    done += n;
                }
            }
            in.skipBytes(count * 8);
        }

        public void copyFrom(ByteBuf in, int from, int count) {
            int at = from;
            for (java.nio.ByteBuffer part : parts(in, count * 8, 8)) {
                DoubleBuffer src = part.asDoubleBuffer();
                int n = src.remaining();
                src.get(a, at, n);
                at += n;
            }
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
            int[] tmp = new int[Math.min(Math.max(count, 1), CHUNK)];
            int done = 0;
            for (java.nio.ByteBuffer part : parts(in, count * 4, 4)) {
                IntBuffer src = part.asIntBuffer();
                while (src.hasRemaining()) {
                    int n = Math.min(tmp.length, src.remaining());
                    src.get(tmp, 0, n);
                    int base = from + done;
                    switch (op) {
                        case SUM -> { for (int i = 0; i < n; i++) a[base + i] += tmp[i]; }
                        case MIN -> { for (int i = 0; i < n; i++) a[base + i] = Math.min(a[base + i], tmp[i]); }
                        case MAX -> { for (int i = 0; i < n; i++) a[base + i] = Math.max(a[base + i], tmp[i]); }
                    }
                    done += n;
                }
            }
            in.skipBytes(count * 4);
        }

        public void copyFrom(ByteBuf in, int from, int count) {
            int at = from;
            for (java.nio.ByteBuffer part : parts(in, count * 4, 4)) {
                IntBuffer src = part.asIntBuffer();
                int n = src.remaining();
                src.get(a, at, n);
                at += n;
            }
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
            long[] tmp = new long[Math.min(Math.max(count, 1), CHUNK)];
            int done = 0;
            for (java.nio.ByteBuffer part : parts(in, count * 8, 8)) {
                LongBuffer src = part.asLongBuffer();
                while (src.hasRemaining()) {
                    int n = Math.min(tmp.length, src.remaining());
                    src.get(tmp, 0, n);
                    int base = from + done;
                    switch (op) {
                        case SUM -> { for (int i = 0; i < n; i++) a[base + i] += tmp[i]; }
                        case MIN -> { for (int i = 0; i < n; i++) a[base + i] = Math.min(a[base + i], tmp[i]); }
                        case MAX -> { for (int i = 0; i < n; i++) a[base + i] = Math.max(a[base + i], tmp[i]); }
                    }
                    done += n;
                }
            }
            in.skipBytes(count * 8);
        }

        public void copyFrom(ByteBuf in, int from, int count) {
            int at = from;
            for (java.nio.ByteBuffer part : parts(in, count * 8, 8)) {
                LongBuffer src = part.asLongBuffer();
                int n = src.remaining();
                src.get(a, at, n);
                at += n;
            }
            in.skipBytes(count * 8);
        }
    }
}
