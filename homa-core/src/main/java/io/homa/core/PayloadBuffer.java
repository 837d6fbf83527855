package io.homa.core;

import java.nio.ByteBuffer;

/**
 * A piece of received payload memory that outlives the call that filled it: a datagram the engine
 * kept instead of copying, or memory it assembles a message in (see {@link PayloadMemory}). It is
 * reference-counted memory in an I/O shell (a retained slice of a pooled buffer), plain heap memory
 * in the simulator. Whoever owns it releases it exactly once: the engine while the message is
 * incomplete, then whoever took the {@link ReceivedMessage}.
 */
public interface PayloadBuffer {
    /**
     * The bytes, from index 0 to its limit (the part's length). The same view on every call: use
     * absolute gets and puts only, never change its position or limit. Writable only for memory from
     * {@link PayloadMemory#allocate}; not valid after {@link #release()}.
     */
    ByteBuffer bytes();

    /** Gives the memory back; called exactly once. */
    void release();
}
