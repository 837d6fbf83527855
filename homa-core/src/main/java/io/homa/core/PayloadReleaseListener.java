package io.homa.core;

import java.nio.ByteBuffer;

/**
 * Told when the engine stops reading an outgoing payload it was given by
 * {@link HomaEngine#startRequest} or {@link HomaEngine#respond}: the RPC finished, failed, was
 * aborted, or (for a response) was acknowledged or abandoned. An I/O shell that passed a view of a
 * pooled buffer releases that buffer here. Called on the engine's thread, from inside an engine
 * call; it must not call back into the engine.
 */
@FunctionalInterface
public interface PayloadReleaseListener {
    /** @param payload the buffer given, or the first of the parts given */
    void released(ByteBuffer payload);

    /** The engine stopped reading a payload given as an {@link OutgoingPayload} (the same object). */
    default void released(OutgoingPayload payload) {
    }
}
