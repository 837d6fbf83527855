package io.homa.core;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * A complete message handed to the application. Its bytes live in one or more {@link PayloadBuffer}
 * parts from the engine's {@link PayloadMemory}: the datagram it arrived in (kept, not copied), or
 * the 64 KiB chunks it was assembled in (every one full but the last), or, for a response whose
 * request asked for it ({@link OutgoingPayload#responseAsArray()}), one heap array of its length.
 * {@link #buffers()} exposes them without copying, {@link #toByteArray()} copies them out,
 * {@link #takeByteArray()} hands over that one array as it is.
 *
 * <p>Ownership: once delivered the engine never touches it again. The receiver owns its memory and
 * gives it back exactly once: {@link #release()}, or {@link #takeParts()} (or {@link #takeOnlyPart()})
 * and then a release of each part. Either is safe from any thread; the second of them is a no-op (release) or throws
 * (takeParts). No view may be read after the release.
 */
public class ReceivedMessage {
    private static final PayloadBuffer[] NONE = {};
    private static final AtomicIntegerFieldUpdater<ReceivedMessage> STATE =
            AtomicIntegerFieldUpdater.newUpdater(ReceivedMessage.class, "state");
    /** The bit of {@link #state} set once the message is released or taken. */
    private static final int RELEASED = Integer.MIN_VALUE;

    /**
     * The length (never negative), with {@link #RELEASED} set once released or taken: one field,
     * not two (a message is an object per call, and a part that is its own message is one
     * allocation granule narrower for it).
     */
    private volatile int state;

    /** A message whose parts are other objects: {@link Assembled}. */
    private ReceivedMessage(int length, boolean assembled) {
        this.state = length;
    }

    /**
     * A message of {@code length} bytes in {@code parts} (taken over; several, one or none): the
     * message an engine assembles.
     */
    static ReceivedMessage assembled(int length, PayloadBuffer[] parts) {
        return new Assembled(length, length != 0 && parts.length == 1 ? parts[0] : length == 0 ? NONE : parts);
    }

    /**
     * A message whose parts are other objects. A message that is its own only part (the common
     * case for a small message: see {@link #ReceivedMessage(int)}) has no such field at all.
     */
    private static final class Assembled extends ReceivedMessage {
        /**
         * The one part of a message that has one (a {@link PayloadBuffer}: no array), else its
         * parts (a {@code PayloadBuffer[]}: several, or none).
         */
        private final Object content;

        Assembled(int length, Object content) {
            super(length, true);
            this.content = content;
        }
    }

    /** Its one part, or its parts: the part is the message itself unless it was {@link #assembled}. */
    private Object content() {
        return this instanceof Assembled a ? a.content : this;
    }

    /** The one part, or null if there are several or none ({@link #parts()}). */
    private PayloadBuffer only() {
        return content() instanceof PayloadBuffer p ? p : null;
    }

    /** The parts of a message that has several or none. */
    private PayloadBuffer[] parts() {
        return (PayloadBuffer[]) content();
    }

    /**
     * A message that is its own only part: for a {@link PayloadBuffer} of a {@link PayloadMemory}
     * that may hold a whole message (one object per message instead of two). {@link IncomingMessage}
     * delivers such a part as it is when it holds a whole message of at least one byte.
     *
     * @throws IllegalStateException if the subclass is not a {@link PayloadBuffer}
     */
    protected ReceivedMessage(int length) {
        if (!(this instanceof PayloadBuffer)) {
            throw new IllegalStateException(getClass().getName() + " is no PayloadBuffer");
        }
        if (length < 0) {
            throw new IllegalArgumentException("negative length " + length);
        }
        this.state = length;
    }

    /**
     * A message that came another way than through an engine (the shell's TCP fallback): it
     * takes {@code bytes} without copying.
     */
    public static ReceivedMessage of(byte[] bytes) {
        return bytes.length == 0 ? new Assembled(0, NONE)
                : new Assembled(bytes.length, new HeapPayloadMemory.Chunk(bytes));
    }

    /** Message length in bytes (0 is a valid length). */
    public final int length() {
        return state & ~RELEASED;
    }

    /** A fresh array with the whole message. */
    public final byte[] toByteArray() {
        byte[] out = new byte[length()];
        copyTo(out, 0);
        return out;
    }

    /**
     * Takes the message as an array the caller owns, and gives its memory back (the message is
     * used up, as by {@link #release()}): the very array it was assembled in when it is one heap
     * array of its length (a response whose request asked for that,
     * {@link OutgoingPayload#responseAsArray()}, or a message that came over TCP), with no copy;
     * else a copy. Any thread.
     *
     * @throws IllegalStateException if the message was released or taken already
     */
    public final byte[] takeByteArray() {
        take();
        PayloadBuffer only = only();
        if (only instanceof HeapPayloadMemory.Chunk c && c.array().length == length()) {
            return c.array();
        }
        try {
            return toByteArray();
        } finally {
            freeParts();
        }
    }

    /** Copies the whole message into {@code dst} at {@code offset}. */
    public final void copyTo(byte[] dst, int offset) {
        int length = length();
        if (offset < 0 || dst.length - offset < length) {
            throw new IndexOutOfBoundsException("message of " + length + " bytes at " + offset + " in " + dst.length);
        }
        PayloadBuffer only = only();
        if (only != null) {
            only.copyInto(dst, offset);
            return;
        }
        int pos = 0;
        for (PayloadBuffer p : parts()) {
            pos += p.copyInto(dst, offset + pos);
        }
    }

    /** The message as read-only buffers, one per part, in order, without copying. */
    public final ByteBuffer[] buffers() {
        PayloadBuffer only = only();
        if (only != null) {
            return new ByteBuffer[]{only.bytes().asReadOnlyBuffer()};
        }
        PayloadBuffer[] parts = parts();
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
    public final PayloadBuffer[] takeParts() {
        take();
        PayloadBuffer only = only();
        return only != null ? new PayloadBuffer[]{only} : parts();
    }

    /**
     * Takes over the memory of a message of one part ({@link #partCount()} 1), as
     * {@link #takeParts()} does, without an array.
     *
     * @throws IllegalStateException if the message has several parts or none, or was released or
     *                               taken already
     */
    public final PayloadBuffer takeOnlyPart() {
        PayloadBuffer only = only();
        if (only == null) {
            throw new IllegalStateException("message of " + length() + " bytes has " + partCount() + " parts, not one");
        }
        take();
        return only;
    }

    private void take() {
        int length = length();
        if (!STATE.compareAndSet(this, length, length | RELEASED)) {
            throw new IllegalStateException("message of " + length + " bytes was released already");
        }
    }

    /** Gives the message's memory back; later calls do nothing. */
    public final void release() {
        int length = length();
        if (STATE.compareAndSet(this, length, length | RELEASED)) {
            freeParts();
        }
    }

    /** Gives back the memory of every part (once: the message is released or taken already). */
    private void freeParts() {
        PayloadBuffer only = only();
        if (only != null) {
            only.free();
            return;
        }
        for (PayloadBuffer p : parts()) {
            p.free();
        }
    }

    /** Number of parts (0 for an empty message). */
    public final int partCount() {
        return content() instanceof PayloadBuffer ? 1 : parts().length;
    }
}
