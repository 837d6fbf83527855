package io.homa.core;

import java.nio.ByteBuffer;

/**
 * A complete message handed to the application. Its bytes live in one or more chunks (large
 * messages are reassembled into 64 KiB chunks so that nothing is allocated before it arrives);
 * {@link #buffers()} exposes them without copying, {@link #toByteArray()} copies them out.
 * Once delivered the engine never touches it again: the receiver owns it.
 */
public final class ReceivedMessage {
    private final int length;
    private final byte[][] chunks;
    private final int chunkSize;

    ReceivedMessage(int length, byte[][] chunks, int chunkSize) {
        this.length = length;
        this.chunks = chunks;
        this.chunkSize = chunkSize;
    }

    /**
     * A message that came another way than through an engine (the shell's TCP fallback): it
     * takes {@code bytes} without copying.
     */
    public static ReceivedMessage of(byte[] bytes) {
        return new ReceivedMessage(bytes.length, new byte[][]{bytes}, Math.max(1, bytes.length));
    }

    /** Message length in bytes (0 is a valid length). */
    public int length() {
        return length;
    }

    /** A fresh array with the whole message. */
    public byte[] toByteArray() {
        if (chunks.length == 1 && chunks[0].length == length) {
            return chunks[0].clone();
        }
        byte[] out = new byte[length];
        copyTo(out, 0);
        return out;
    }

    /** Copies the whole message into {@code dst} at {@code offset}. */
    public void copyTo(byte[] dst, int offset) {
        int pos = 0;
        for (byte[] c : chunks) {
            int n = Math.min(c.length, length - pos);
            System.arraycopy(c, 0, dst, offset + pos, n);
            pos += n;
        }
    }

    /** The message as read-only buffers, in order, without copying. */
    public ByteBuffer[] buffers() {
        ByteBuffer[] out = new ByteBuffer[chunks.length];
        int pos = 0;
        for (int i = 0; i < chunks.length; i++) {
            int n = Math.min(chunks[i].length, length - pos);
            out[i] = ByteBuffer.wrap(chunks[i], 0, n).asReadOnlyBuffer();
            pos += n;
        }
        return out;
    }

    /** The underlying chunks (every one full except possibly the last); do not modify. */
    byte[][] chunks() {
        return chunks;
    }

    int chunkSize() {
        return chunkSize;
    }
}
