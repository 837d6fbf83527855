package io.homa.core.sim;

/**
 * Reads decisions from a fuzzer's bytes, front to back. When the bytes run out every read returns
 * zero (and {@link #exhausted()} turns true), so any byte string is a valid, finite program.
 */
final class FuzzInput {
    private final byte[] data;
    private int pos;

    FuzzInput(byte[] data) {
        this.data = data;
    }

    boolean exhausted() {
        return pos >= data.length;
    }

    int u8() {
        return pos < data.length ? data[pos++] & 0xFF : 0;
    }

    int u16() {
        return (u8() << 8) | u8();
    }

    int i32() {
        return (u16() << 16) | u16();
    }

    long i64() {
        return ((long) i32() << 32) | (i32() & 0xFFFF_FFFFL);
    }

    boolean bool() {
        return (u8() & 1) != 0;
    }

    /** A value in {@code [0, bound)} ({@code bound} at least 1). */
    int below(int bound) {
        if (bound <= 1) {
            return 0;
        }
        int v = bound <= 256 ? u8() : bound <= 65_536 ? u16() : i32() & Integer.MAX_VALUE;
        return v % bound;
    }

    /** The next {@code n} bytes (fewer if the input ends first). */
    byte[] bytes(int n) {
        int k = Math.max(0, Math.min(n, data.length - pos));
        byte[] out = new byte[k];
        System.arraycopy(data, pos, out, 0, k);
        pos += k;
        return out;
    }
}
