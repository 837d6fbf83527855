package io.homa.internal.rpc;

import io.homa.core.OutgoingPayload;
import io.netty.buffer.ByteBuf;

/**
 * A message the user handed over (a call's request, a request's reply) as the engine reads it:
 * straight from the user's byte array or {@code ByteBuf}, with no view object per message.
 * Read on the event loop that owns the engine.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public interface UserPayload extends OutgoingPayload {
    /** The user's buffer, read in place when the engine sends by reference; null for a byte array. */
    ByteBuf payloadBuffer();

    /** The engine stopped reading: the user's buffer, if any, is released (once, whoever asks again). */
    void releasePayload();
}
