package io.homa;

import io.netty.buffer.ByteBuf;

import java.net.InetSocketAddress;

/**
 * One request delivered to a {@link HomaHandler}, and the way to answer it.
 *
 * <p><b>Threads:</b> every method may be called from any thread, at any time (during or after
 * {@link HomaHandler#handle}).
 *
 * <p><b>Buffers:</b> the request's bytes are on the Java heap and belong to this object; they stay
 * valid as long as it is reachable, whether or not it has been answered.
 */
public interface HomaRequest {
    /**
     * The client's address (where the response goes): its Homa socket's address, also for a
     * request that came over the TCP fallback (the connection's IP and the client's UDP port).
     */
    InetSocketAddress peer();

    /** The request's length in bytes. */
    int length();

    /** A fresh copy of the request's bytes. */
    byte[] toByteArray();

    /**
     * The request's bytes without copying: a new read-only {@link ByteBuf} view on each call
     * (reader index 0, {@link #length()} readable bytes). The caller owns the view: release it when
     * done, as with any {@code ByteBuf} (it is heap memory, so a forgotten release costs nothing
     * but is reported by no leak detector either).
     */
    ByteBuf payload();

    /**
     * Sends the response. The array then belongs to the socket: do not change it afterwards (it is
     * read, without a copy, until the client acknowledges the response).
     *
     * @throws HomaMessageTooLargeException if longer than {@link HomaConfig#maxMessageLength()}
     *         (the request stays unanswered; a shorter reply may follow)
     * @throws HomaBadArgumentException if {@code response} is null
     * @throws IllegalStateException if this request was answered already
     */
    void reply(byte[] response);

    /**
     * Sends the response without copying. Ownership of one reference to {@code response} passes
     * to the socket in every case, even when this method throws: the socket releases it once the
     * client has acknowledged the response (or the RPC is gone, or the socket closes). The
     * readable bytes are the response; do not change them afterwards. A direct buffer avoids a
     * copy into native memory on send.
     *
     * @throws HomaMessageTooLargeException if longer than {@link HomaConfig#maxMessageLength()}
     * @throws HomaBadArgumentException if {@code response} is null
     * @throws IllegalStateException if this request was answered already
     */
    void reply(ByteBuf response);

    /**
     * Whether a reply can still be sent: false once replied, once the server dropped the request
     * (handler failure or {@link HomaConfig#requestTimeout()}), or once the socket closed. A reply
     * that is no longer possible is discarded silently (a dropped request's caller has failed).
     */
    boolean isOpen();
}
