package io.homa.bench;

/** Request payloads: deterministic, non-zero bytes, so that a bad echo shows. */
public final class Payloads {
    private Payloads() {
    }

    /** {@code size} bytes of a repeating pattern. */
    public static byte[] of(int size) {
        byte[] b = new byte[size];
        for (int i = 0; i < size; i++) {
            b[i] = (byte) (i * 31 + 7);
        }
        return b;
    }

    /** Writes {@code stamp} into the first (up to) 8 bytes, so that each call's echo is unique. */
    public static void stamp(byte[] b, long stamp) {
        int n = Math.min(8, b.length);
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (stamp >>> (8 * i));
        }
    }

    /** Whether {@code reply} echoes {@code request} (length, stamp and last byte). */
    public static boolean echoes(byte[] request, byte[] reply) {
        if (reply == null || reply.length != request.length) {
            return false;
        }
        int n = Math.min(8, request.length);
        for (int i = 0; i < n; i++) {
            if (reply[i] != request[i]) {
                return false;
            }
        }
        return request.length == 0 || reply[request.length - 1] == request[request.length - 1];
    }
}
