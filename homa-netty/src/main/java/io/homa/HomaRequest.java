package io.homa;

import io.netty.buffer.ByteBuf;

import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * One request delivered to a {@link HomaHandler}, and the way to answer it.
 *
 * <p><b>Threads:</b> every method may be called from any thread, at any time (during or after
 * {@link HomaHandler#handle}); the bytes, though, only until the request is answered or dropped.
 *
 * <p><b>Buffers:</b> the request's bytes are pooled memory that the socket received them in (the
 * datagram itself for a request that came in one datagram, else one buffer per 64 KiB it was
 * assembled in), never copied on the way here. This object holds them until the request is
 * answered or dropped (handler failure, {@link HomaConfig#requestTimeout()}, socket closed), and
 * then releases them: read them before replying, or take {@link #payload()}, which is yours to
 * keep (and release) for as long as you like. A request that came over the TCP fallback is on the
 * heap, under the same rules.
 */
public interface HomaRequest {
    /**
     * The client's address (where the response goes): its Homa socket's address, also for a
     * request that came over the TCP fallback (the connection's IP and the client's UDP port).
     */
    InetSocketAddress peer();

    /**
     * The verified identity of the client, on a secured socket ({@link HomaConfig.Builder#security}):
     * with {@link HomaSecurity#mutualTls}, the subject of the client's certificate (RFC 2253, e.g.
     * {@code CN=billing,O=example}), verified by the TLS handshake whose keys sealed every
     * datagram of the request; with pre-shared keys, the {@link HomaSecurity#peerName} of the key.
     * Null on a plain socket, where nothing about the sender is verified. Authorize by it, never
     * by {@link #peer()}, which any sender can forge.
     */
    default String peerIdentity() {
        return null;
    }

    /**
     * The TLS session of the key exchange with the client ({@link HomaSecurity#mutualTls}), or,
     * for a request that came over the TCP fallback, that of its TLS connection: its certificates,
     * cipher suite and protocol, e.g. for authorization beyond the subject. Null in the other
     * modes, or when the exchange has ended since the request arrived.
     */
    default javax.net.ssl.SSLSession tlsSession() {
        return null;
    }

    /** The request's length in bytes. */
    int length();

    /**
     * A fresh copy of the request's bytes (the one copy of the {@code byte[]} API).
     *
     * @throws IllegalStateException if the request was answered or dropped (its bytes are released)
     */
    byte[] toByteArray();

    /**
     * The request's bytes without copying: a new {@link ByteBuf} view on each call ({@link #length()}
     * readable bytes) holding a reference of its own to the received memory, which stays valid
     * after the reply. The caller owns it: release it, or hand it on, e.g. to
     * {@link #reply(ByteBuf)}, which sends it back without a copy (an echo). Views share the bytes.
     * A forgotten release leaks pooled memory (the leak detector reports it).
     *
     * @throws IllegalStateException if the request was answered or dropped (its bytes are released)
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
     * readable bytes are the response; do not change them afterwards. It is read in place, also a
     * composite (as {@link #payload()} is for a request of more than 64 KiB): each segment is
     * copied once, straight into the datagram that carries it (again for a retransmission), and
     * the buffer is never gathered into one first.
     *
     * @throws HomaMessageTooLargeException if longer than {@link HomaConfig#maxMessageLength()}
     * @throws HomaBadArgumentException if {@code response} is null
     * @throws IllegalStateException if this request was answered already
     */
    void reply(ByteBuf response);

    /**
     * How long the caller will still wait for the response: until its deadline, which the client
     * sends with the request (the {@code Duration} of its call, less the time spent before the
     * request left; the server takes off a margin for the time on the way: 1 ms, or 2% of what
     * was left (at most 100 ms), or twice how late its event loop has been running recently),
     * or, for a client that sent none (an older peer, or a request over the TCP fallback), the
     * server's {@link HomaConfig#requestTimeout()}; whichever comes first. {@link Duration#ZERO}
     * once it has passed. A handler doing long work may check it and give up: once it is zero the
     * request is dropped and a reply is discarded. No handler starts for a request whose time is up.
     * Any thread. (Requests not made by a {@link HomaSocket} have no deadline: the default says
     * the longest {@code Duration}.)
     */
    default Duration timeRemaining() {
        return Duration.ofSeconds(Long.MAX_VALUE, 999_999_999);
    }

    /**
     * The same deadline as a {@link System#nanoTime()} value, for code that schedules on it
     * ({@link #timeRemaining()} is this minus {@code System.nanoTime()}, at least zero).
     */
    default long deadlineNanoTime() {
        return System.nanoTime() + Long.MAX_VALUE / 2;
    }

    /**
     * Whether a reply can still be sent: false once replied, once the server dropped the request
     * (handler failure, {@link HomaConfig#requestTimeout()} or the caller's deadline passed, or the
     * caller cancelled the call), or once the socket closed. A reply
     * that is no longer possible is discarded silently (a dropped request's caller has failed).
     */
    boolean isOpen();
}
