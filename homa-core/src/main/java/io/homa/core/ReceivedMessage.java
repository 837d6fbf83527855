package io.homa.core;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * A complete message handed to the application. Its bytes live in one or more {@link PayloadBuffer}
 * parts from the engine's {@link PayloadMemory}: the datagram it arrived in (kept, not copied), or
 * the 64 KiB chunks it was assembled in (every one full but the last). {@link #buffers()} exposes
 * them without copying, {@link #toByteArray()} copies them out.
 *
 * <p>Ownership: once delivered the engine never touches it again. The receiver owns its memory and
 * gives it back exactly once: {@link #release()}, or {@link #takeParts()} and then a release of each
 * part. Either is safe from any thread; the second of them is a no-op (release) or throws
 * (takeParts). No view may be read after the release.
 */
public final class ReceivedMessage {
    private static final PayloadBuffer[] NONE = {};
    private static final AtomicIntegerFieldUpdater<ReceivedMessage> RELEASED =
            AtomicIntegerFieldUpdater.newUpdater(ReceivedMessage.class, "released");

    private final int length;
    private final PayloadBuffer[] parts;
    /** 1 once released or taken. */
    private volatile int released;

    ReceivedMessage(int length, PayloadBuffer[] parts) {
        this.length = length;
        this.parts = length == 0 ? NONE : parts;
    }

    /**
     * A message that came another way than through an engine (the shell's TCP fallback): it
     * takes {@code bytes} without copying.
     */
    public static ReceivedMessage of(byte[] bytes) {
        return new ReceivedMessage(bytes.length, new PayloadBuffer[]{new HeapPayloadMemory.Chunk(bytes)});
    }

    /** Message length in bytes (0 is a valid length). */
    public int length() {
        return length;
    }

    /** A fresh array with the whole message. */
    public byte[] toByteArray() {
        byte[] out = new byte[length];
        copyTo(out, 0);
        return out;
    }

    /** Copies the whole message into {@code dst} at {@code offset}. */
    public void copyTo(byte[] dst, int offset) {
        if (offset < 0 || dst.length - offset < length) {
            throw new IndexOutOfBoundsException("message of " + length + " bytes at " + offset + " in " + dst.length);
        }
        int pos = 0;
        for (PayloadBuffer p : parts) {
            pos += p.copyTo(dst, offset + pos);
        }
    }

    /** The message as read-only buffers, one per part, in order, without copying. */
    public ByteBuffer[] buffers() {
        ByteBuffer[] out = new ByteBuffer[parts.length];
        for (int i = 0; i < parts.length; i++) {
            out[i] = parts[i].bytes().asReadOnlyBuffer();
        }
        return out;
    }

    /**
     * Takes over the parts' memory: the caller now releases each part (an I/O shell turns them into
     * its own buffers). Empty for an empty message.
     *
     * @throws IllegalStateException if the message was released or taken already
     */
    public PayloadBuffer[] takeParts() {
        if (!RELEASED.compareAndSet(this, 0, 1)) {
            throw new IllegalStateException("message of " + length + " bytes was released already");
        }
        return parts;
    }

    /** Gives the message's memory back; later calls do nothing. */
    public void release() {
        if (RELEASED.compareAndSet(this, 0, 1)) {
            for (PayloadBuffer p : parts) {
                p.release();
            }
        }
    }

    /** Number of parts (0 for an empty message). */
    int partCount() {
        return parts.length;
    }
}
