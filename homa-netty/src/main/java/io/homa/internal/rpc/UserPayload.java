package io.homa.internal.rpc;

import io.homa.core.OutgoingPayload;
import io.netty.buffer.ByteBuf;

import java.nio.ByteBuffer;

/**
 * A message the user handed over (a call's request, a request's reply) as the engine reads it:
 * straight from the user's byte array or {@code ByteBuf}, with no view object per message. An
 * implementation says which of the two it holds; how the engine reads either is here, once.
 * Read on the event loop that owns the engine.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public interface UserPayload extends OutgoingPayload {
    /** The user's byte array, or null when the message is {@link #payloadBuffer()}. */
    byte[] payloadBytes();

    /** The user's buffer (its readable bytes), read in place when the engine sends by reference; null for a byte array. */
    ByteBuf payloadBuffer();

    /** The engine stopped reading: the user's buffer, if any, is released (once, whoever asks again). */
    void releasePayload();

    @Override
    default int payloadLength() {
        byte[] bytes = payloadBytes();
        return bytes != null ? bytes.length : payloadBuffer().readableBytes();
    }

    @Override
    default boolean payloadDirect() {
        return payloadBytes() == null && payloadBuffer().isDirect();
    }

    /** The one copy of a small message, into the datagram; a buffer's composites included, and no view object. */
    @Override
    default void copyPayload(int offset, ByteBuffer out, int at, int n) {
        byte[] bytes = payloadBytes();
        if (bytes != null) {
            out.put(at, bytes, offset, n);
            return;
        }
        ByteBuf buf = payloadBuffer();
        int position = out.position();
        int limit = out.limit();
        try {
            out.limit(at + n).position(at);
            buf.getBytes(buf.readerIndex() + offset, out);
        } finally {
            out.limit(limit).position(position);
        }
    }
}
