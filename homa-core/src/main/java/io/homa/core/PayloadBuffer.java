package io.homa.core;

import java.nio.ByteBuffer;

/**
 * A piece of received payload memory that outlives the call that filled it: a datagram the engine
 * kept instead of copying, or memory it assembles a message in (see {@link PayloadMemory}). It is
 * reference-counted memory in an I/O shell (a reference to a pooled buffer and where in it the bytes lie), plain heap memory
 * in the simulator. Whoever owns it releases it exactly once: the engine while the message is
 * incomplete, then whoever took the {@link ReceivedMessage}.
 *
 * <p>A part that holds a whole message may be that message too (a {@link ReceivedMessage}
 * subclass whose only part is itself: one object per message, not two); the engine then delivers
 * it as it is. Its {@link #free()} is the memory's, {@link ReceivedMessage#release()} the message's.
 */
public interface PayloadBuffer {
    /**
     * The bytes, from index 0 to its limit (the part's length): use absolute gets and puts only,
     * never change its position or limit. Memory from {@link PayloadMemory#allocate} returns the
     * same writable view on every call (the engine writes each packet through it); memory from
     * {@link PayloadMemory#keep} may make a new view per call, to be read only. Not valid after
     * {@link #free()}.
     */
    ByteBuffer bytes();

    /**
     * Copies all its bytes into {@code dst} at {@code offset} (which has room) and returns how many.
     * A shell may override it to copy without making the {@link #bytes()} view.
     */
    default int copyInto(byte[] dst, int offset) {
        ByteBuffer b = bytes();
        int n = b.limit();
        b.get(0, dst, offset, n);
        return n;
    }

    /** Gives the memory back; called exactly once. */
    void free();
}
