package io.homa.core;

import java.nio.ByteBuffer;

/**
 * An outgoing message's bytes that the engine reads through calls instead of a
 * {@link ByteBuffer} view: a shell whose messages live in its own buffer types (a byte array, a
 * Netty {@code ByteBuf}) then makes no view object per message, which for small RPCs was a tenth
 * of what a call allocated. Given to {@link HomaEngine#startRequest(long, java.net.InetSocketAddress,
 * OutgoingPayload, long, boolean)} or {@link HomaEngine#respond(long, java.net.InetSocketAddress,
 * long, OutgoingPayload)}; read on the engine's thread until the engine tells
 * {@link PayloadReleaseListener#released(OutgoingPayload)}. Its bytes must not change meanwhile.
 */
public interface OutgoingPayload {
    /**
     * The longest response assembled in one array for a {@link #responseAsArray()} request (8 MiB):
     * a longer one, whose array would be charged against the engine's buffer limits for up to 8
     * times the bytes received for longer, is assembled in chunks and copied out.
     */
    int MAX_RESPONSE_ARRAY = 8 << 20;

    /** The message's length in bytes; fixed. */
    int payloadLength();

    /**
     * Whether every byte is in direct memory, so that a shell may send it in place
     * ({@link EngineConfig#sendPayloadByReference}: {@link Transmit#source()} names it then).
     */
    boolean payloadDirect();

    /**
     * Copies bytes {@code [offset, offset + n)} of the message into {@code out} at absolute index
     * {@code at}; {@code out}'s position and limit are as they were afterwards.
     */
    void copyPayload(int offset, ByteBuffer out, int at, int n);

    /**
     * Of a request: whether its caller wants the response as one byte array (a {@code byte[]}
     * call). The engine then assembles a response of at most {@link #MAX_RESPONSE_ARRAY}
     * bytes in one heap array of its length: in chunks until an eighth of it has arrived, then in
     * the array (the chunks copied in; the array charged in full against the buffer limits from
     * then on), so that {@link ReceivedMessage#takeByteArray()} hands it over without a copy.
     * Default false: chunks from the engine's {@link PayloadMemory}, allocated as bytes arrive.
     */
    default boolean responseAsArray() {
        return false;
    }
}
