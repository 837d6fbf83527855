package io.homa;

import io.netty.buffer.ByteBuf;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A Homa endpoint on one UDP port: it sends requests ({@code call}) and answers them
 * ({@link #serve}). There are no connections: one socket talks to any number of peers, and every
 * call is independent of the others (no head-of-line blocking).
 *
 * <pre>{@code
 * try (HomaSocket server = HomaSocket.open(config); HomaSocket client = HomaSocket.open(config)) {
 *     server.serve(request -> request.reply(request.toByteArray()));
 *     byte[] reply = client.call(server.localAddress(), "hello".getBytes(UTF_8)).get();
 * }
 * }</pre>
 *
 * <p><b>Threads.</b> Every method may be called from any thread. Each socket owns one event loop
 * per engine ({@link HomaConfig#eventLoops()}), which does all protocol work; a call costs one
 * hand-off into the loop. Futures complete and handlers run on the socket's executor (never on the
 * event loop, so user code may block) unless {@link HomaConfig#inlineExecution()} is set.
 *
 * <p><b>Deadlines.</b> Every call has one: the given {@code Duration}, else
 * {@link HomaConfig#defaultDeadline()} (30 s by default). When it passes, the RPC is aborted and the
 * future fails with {@link HomaTimeoutException}. The protocol also fails a call whose server
 * stays silent for {@code timeoutTicks} ticks ({@link HomaConfig#DEFAULT_TIMEOUT_TICKS}: 1 s by
 * default) with the same exception.
 *
 * <p><b>Failures.</b> A failed call completes its future exceptionally with a
 * {@link HomaException} subclass; arguments that can never work make the method throw one at once.
 *
 * <p><b>Addresses.</b> The bind address's family decides which peers a socket reaches: IPv4, IPv6,
 * or both for the IPv6 wildcard {@code [::]}; IPv4-mapped IPv6 addresses are treated as the IPv4
 * address. With {@link HomaConfig#tcpFallback()} a socket also serves TCP on its port number and
 * calls over TCP the peers that Homa cannot reach (docs/deployment.md).
 *
 * <p><b>Closing.</b> {@link #close()} fails every pending call with {@link HomaClosedException},
 * releases every buffer it holds, stops its threads and waits (a few seconds at most) for them to
 * end. It is idempotent.
 */
public interface HomaSocket extends AutoCloseable {
    /**
     * Opens a socket: binds its port and starts its event loop(s).
     *
     * @throws HomaBadArgumentException if {@code config} is null
     * @throws HomaException of kind {@link HomaException.Kind#IO_ERROR} if the port cannot be bound
     */
    static HomaSocket open(HomaConfig config) {
        if (config == null) {
            throw new HomaBadArgumentException("config must not be null (use HomaConfig.defaults())");
        }
        return NettyHomaSocket.open(config);
    }

    /** Opens a socket with {@link HomaConfig#defaults()}. */
    static HomaSocket open() {
        return open(HomaConfig.defaults());
    }

    /** The bound address; its port is the real one when the configuration asked for port 0. */
    InetSocketAddress localAddress();

    /** This socket's configuration. */
    HomaConfig config();

    /**
     * Sends {@code request} to {@code server} with the default deadline and returns its response.
     *
     * @see #call(InetSocketAddress, byte[], Duration)
     */
    CompletableFuture<byte[]> call(InetSocketAddress server, byte[] request);

    /**
     * Sends {@code request} to {@code server}; the future completes with the response, or
     * exceptionally with a {@link HomaException}: {@link HomaTimeoutException} (silent server or
     * deadline passed), {@link HomaUnknownRpcException}, {@link HomaOverloadedException} (the
     * server refused it unrun: its handlers were too far behind), {@link HomaOutcomeUnknownException}
     * (the server restarted and may have run the request: it is not sent again, the call not being
     * marked idempotent), {@link HomaClosedException}, or
     * kind {@link HomaException.Kind#RESOURCE_LIMIT}.
     *
     * <p>Buffers: the socket reads {@code request} without copying until the future completes: do
     * not change the array before then. The response array belongs to the caller (the one copy
     * out of the memory it was received in, which is released at once).
     * Cancelling the future ({@code future.cancel(..)}) aborts the RPC and frees its state; the
     * server learns of it when it next asks. Completing the future yourself does not abort it.
     *
     * @param deadline how long the call may take, from now
     * @throws HomaBadArgumentException if an argument is null, the deadline is not positive, the
     *         address is unresolved, or of a family the socket's bind address cannot reach
     * @throws HomaMessageTooLargeException if the request is longer than
     *         {@link HomaConfig#maxMessageLength()}
     */
    CompletableFuture<byte[]> call(InetSocketAddress server, byte[] request, Duration deadline);

    /**
     * Zero-copy variant of {@link #call(InetSocketAddress, byte[])} with the default deadline.
     *
     * @see #call(InetSocketAddress, ByteBuf, Duration)
     */
    CompletableFuture<ByteBuf> call(InetSocketAddress server, ByteBuf request);

    /**
     * Zero-copy variant of {@link #call(InetSocketAddress, byte[], Duration)}.
     *
     * <p>Ownership: one reference to {@code request} passes to the socket in every case, even when
     * this method throws; the socket releases it as soon as the RPC no longer needs it (response,
     * failure or close) and the datagrams that carried its bytes have left; a thread that just
     * sent the last of them may drop its hold a moment after the future completed, so a caller that
     * kept a reference of its own may see {@code refCnt()} fall a little later. Its readable bytes
     * are the request; do not change them until the future completes; it is read in place, also a
     * composite. The response {@code ByteBuf} belongs to
     * the caller, who releases it: it is the pooled memory the response was received in, not a
     * copy (a slice of the datagram for a response of one datagram, else a composite of 64 KiB
     * chunks), so a forgotten release leaks pooled memory. If nobody takes it (the future was
     * completed or cancelled meanwhile), the socket releases it.
     */
    CompletableFuture<ByteBuf> call(InetSocketAddress server, ByteBuf request, Duration deadline);

    /**
     * {@link #call(InetSocketAddress, byte[], Duration)} with per-call options: the deadline (the
     * socket's default if the options name none) and whether the request is idempotent. A call that
     * is not idempotent fails with {@link HomaOutcomeUnknownException} when a restarted server may
     * have run its request; an idempotent one is sent again. Buffers and exceptions as there.
     *
     * <p>The default implementation, for implementations that predate the options, makes a call
     * with the options' deadline that is not idempotent.
     *
     * @throws HomaBadArgumentException if {@code options} is null, or as there
     */
    default CompletableFuture<byte[]> call(InetSocketAddress server, byte[] request, CallOptions options) {
        if (options == null) {
            throw new HomaBadArgumentException("options must not be null (use CallOptions.DEFAULT)");
        }
        return call(server, request, options.deadline() == null ? config().defaultDeadline() : options.deadline());
    }

    /**
     * Zero-copy variant of {@link #call(InetSocketAddress, byte[], CallOptions)}; ownership of
     * {@code request} and of the response as in {@link #call(InetSocketAddress, ByteBuf, Duration)}
     * (the request passes to the socket even when this throws).
     */
    default CompletableFuture<ByteBuf> call(InetSocketAddress server, ByteBuf request, CallOptions options) {
        if (options == null) {
            io.netty.util.ReferenceCountUtil.safeRelease(request);
            throw new HomaBadArgumentException("options must not be null (use CallOptions.DEFAULT)");
        }
        return call(server, request, options.deadline() == null ? config().defaultDeadline() : options.deadline());
    }

    /**
     * Starts answering requests with {@code handler} (replacing any earlier one). Requests that
     * arrive while no handler is set are dropped unrun. Over Homa their clients send them again
     * (a request the server does not know restarts, unless the call is not idempotent and an
     * earlier incarnation of the server may have run it: then it fails as
     * {@link HomaOutcomeUnknownException}), so a call one of whose copies arrives after
     * {@code serve} is answered; one that finds no handler through all its restarts fails as for
     * a handler that throws ({@link HomaUnknownRpcException}). Over the TCP fallback such a
     * request fails at once, with the same exception.
     *
     * @throws HomaBadArgumentException if {@code handler} is null
     */
    void serve(HomaHandler handler);

    /**
     * A snapshot of this socket's counters, summed over its engines. After close, the last values.
     * Costs one round trip to each event loop.
     */
    HomaMetrics metrics();

    /**
     * The TLS session of this socket's key exchange with {@code peer} (its Homa address), on a
     * {@link HomaSecurity#mutualTls} socket once a call to or from it has agreed keys: the peer's
     * certificates ({@code getPeerCertificates()}), the cipher suite, the protocol. Null before
     * that, after the exchange's connection closed, and in the other modes. Any thread.
     *
     * @throws HomaBadArgumentException if {@code peer} is null
     */
    default javax.net.ssl.SSLSession tlsSession(InetSocketAddress peer) {
        if (peer == null) {
            throw new HomaBadArgumentException("peer must not be null");
        }
        return null;
    }

    /**
     * A snapshot of every live RPC of this socket (client and server), oldest first per event loop.
     * Costs one hand-off to each event loop and one small object per RPC. After close, empty.
     */
    List<RpcInfo> rpcs();

    /**
     * Adds a listener that hears the end of every later client call (see {@link CallListener} for
     * its thread and cost).
     *
     * @throws HomaBadArgumentException if {@code listener} is null
     */
    void addCallListener(CallListener listener);

    /** Removes a listener added by {@link #addCallListener}; nothing if it is not there. */
    void removeCallListener(CallListener listener);

    /** False once {@link #close()} was called. */
    boolean isOpen();

    /**
     * Fails every pending call with {@link HomaClosedException}, drops unanswered requests, frees
     * every buffer, closes the sockets and stops the socket's threads (its event loops, and its own
     * executor after the completions queued on it have run). Waits for the threads to end, unless
     * called from one of them. Idempotent: later calls return at once.
     */
    @Override
    void close();
}
