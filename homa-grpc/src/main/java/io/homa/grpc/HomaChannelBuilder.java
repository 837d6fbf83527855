package io.homa.grpc;

import io.grpc.ForwardingChannelBuilder2;
import io.grpc.ManagedChannelBuilder;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.ManagedChannelImplBuilder;
import io.homa.HomaBadArgumentException;
import io.homa.HomaConfig;
import io.homa.HomaSecurity;
import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.TlsChannelCredentials;

/**
 * Builds a gRPC {@link io.grpc.ManagedChannel} whose calls travel over Homa instead of HTTP/2:
 *
 * <pre>{@code
 * ManagedChannel channel = HomaChannelBuilder.forAddress("10.0.0.7", 50051).build();
 * GreeterGrpc.GreeterBlockingStub stub = GreeterGrpc.newBlockingStub(channel);
 * }</pre>
 *
 * <p>Everything else (executor, interceptors, deadlines, load balancing, name resolution) is
 * grpc-java's own and works as with any channel. The channel opens one Homa socket when it is
 * built ({@link #homaConfig(HomaConfig)}, by default {@link HomaConfig#defaults()}: any local
 * address, a free port) and closes it when the channel terminates. That socket also receives the
 * server's messages of streaming calls, so servers must be able to reach it (docs/grpc.md).
 *
 * <p><b>Security.</b> With {@link #forAddress(String, int, ChannelCredentials)} and
 * {@link TlsChannelCredentials} (a client certificate and the roots to trust, as key and trust
 * managers or PEM) the channel's socket is a {@link io.homa.HomaSecurity#mutualTls} socket: before
 * the first call to a server the two run a TLS 1.3 handshake with both certificates, and every
 * datagram is then encrypted and authenticated. A server whose certificate is not trusted fails
 * the channel's calls with UNAVAILABLE (the cause a {@link io.homa.HomaAuthenticationException}).
 * The call's attributes carry the TLS session ({@code Grpc.TRANSPORT_ATTR_SSL_SESSION}) and the
 * security level PRIVACY_AND_INTEGRITY, as grpc-netty's do. Host names are not checked against
 * the certificate: authorize by the certificate's subject. Without credentials (or with
 * {@link InsecureChannelCredentials}) calls travel in plaintext, unauthenticated, and
 * {@link #useTransportSecurity()} throws. Messages are never compressed. The default maximum inbound message is 4 MiB, as for any
 * grpc-java channel; raise it with {@link #maxInboundMessageSize(int)}.
 *
 * <p><b>Threads and buffers.</b> A builder is not thread-safe; the channel it builds is, as any
 * gRPC channel. Your listeners and stubs' callbacks run on the channel's executor, as with any
 * transport. With grpc-java's executor (the default) the transport's own work (decoding the
 * server's answer and queueing your callback) runs on the Homa socket's event loop: one thread
 * hand-off per call. With {@code directExecutor()} your callbacks run on that event loop, as
 * grpc-netty runs them on its own, with no hand-off (or, rarely, on a thread of yours that is
 * sending on the channel at that moment and finds them due: a caller's turn, docs/netty.md): they
 * must never block (a blocking callback stops the channel's reads and sends), and a blocking stub
 * called from one waits, until its deadline if it has one, for an answer the loop cannot read. A
 * {@code homaConfig} that names an executor keeps it: the socket then runs your callbacks there,
 * one hand-off more, where they may block. docs/grpc.md counts the hand-offs. A message is
 * drained from the marshaller's stream into one pooled buffer that the socket sends and releases,
 * and an answer reaches the marshaller as a stream over the memory Homa received it in
 * ({@code KnownLength}, {@code HasByteBuffer}, {@code Detachable}; grpc-java closes it after
 * parsing, which releases it): no buffer of yours passes to the transport.
 *
 * <p><b>Failures.</b> A call fails with a gRPC {@link io.grpc.Status} (docs/grpc.md has the table):
 * a silent or vanished server gives UNAVAILABLE, a passed deadline DEADLINE_EXCEEDED, a message
 * over a limit RESOURCE_EXHAUSTED. The builder's methods throw {@link HomaBadArgumentException}
 * for arguments that can never work.
 */

public final class HomaChannelBuilder extends ForwardingChannelBuilder2<HomaChannelBuilder> {
    private final ManagedChannelImplBuilder delegate;
    private HomaConfig homaConfig = HomaConfig.defaults();
    /** From the channel's credentials; null for plaintext. */
    private HomaSecurity security;
    private int maxInboundMessageSize = GrpcUtil.DEFAULT_MAX_MESSAGE_SIZE;

    private HomaChannelBuilder(String target) {
        delegate = new ManagedChannelImplBuilder(target,
                () -> new HomaTransportFactory(SocketThreads.forChannel(securedConfig()),
                        maxInboundMessageSize),
                () -> GrpcUtil.DEFAULT_PORT_PLAINTEXT);
    }

    /** A channel to one server, by host name or literal address, and the server's Homa port. */
    public static HomaChannelBuilder forAddress(String host, int port) {
        if (host == null) {
            throw new HomaBadArgumentException("host must not be null");
        }
        if (port < 0 || port > 65_535) {
            throw new HomaBadArgumentException("port must be 0..65535, was " + port);
        }
        return new HomaChannelBuilder(GrpcUtil.authorityFromHostAndPort(host, port));
    }

    /**
     * A channel to one server with {@code credentials}: {@link TlsChannelCredentials} for mutual
     * TLS (see the class comment), {@link InsecureChannelCredentials} for plaintext.
     *
     * @throws HomaBadArgumentException if the credentials are of another kind, ask for a feature
     *                                  Homa cannot honour, or lack a client certificate
     */
    public static HomaChannelBuilder forAddress(String host, int port, ChannelCredentials credentials) {
        HomaSecurity s = TlsCredentials.forChannel(credentials);
        HomaChannelBuilder b = forAddress(host, port);
        b.security = s;
        return b;
    }

    /**
     * A channel to a gRPC target (as {@link #forTarget(String)}) with {@code credentials}, as
     * {@link #forAddress(String, int, ChannelCredentials)} takes them.
     *
     * @throws HomaBadArgumentException as {@link #forAddress(String, int, ChannelCredentials)}
     */
    public static HomaChannelBuilder forTarget(String target, ChannelCredentials credentials) {
        HomaSecurity s = TlsCredentials.forChannel(credentials);
        HomaChannelBuilder b = forTarget(target);
        b.security = s;
        return b;
    }

    /** The socket's settings with the credentials' security, if any (it replaces a {@code homaConfig}'s). */
    private HomaConfig securedConfig() {
        return security == null ? homaConfig : homaConfig.toBuilder().security(security).build();
    }

    /**
     * A channel to a gRPC target: {@code homa://host:port}, or any target grpc-java resolves to
     * internet socket addresses ({@code host:port}, {@code dns:///host:port}, ...); the resolved
     * addresses are called over Homa. A target without a port gets 80, grpc-java's plaintext
     * default: name the server's Homa port.
     */
    public static HomaChannelBuilder forTarget(String target) {
        if (target == null) {
            throw new HomaBadArgumentException("target must not be null");
        }
        return new HomaChannelBuilder(target);
    }

    /**
     * The settings of the channel's Homa socket (bind address, timeouts, executor...).
     *
     * @throws HomaBadArgumentException if {@code config} is null
     */
    public HomaChannelBuilder homaConfig(HomaConfig config) {
        if (config == null) {
            throw new HomaBadArgumentException("homaConfig must not be null (use HomaConfig.defaults())");
        }
        this.homaConfig = config;
        return this;
    }

    /** The largest message the channel accepts (default 4 MiB); larger ones fail with RESOURCE_EXHAUSTED. */
    @Override
    public HomaChannelBuilder maxInboundMessageSize(int bytes) {
        if (bytes < 0) {
            throw new HomaBadArgumentException("maxInboundMessageSize must be >= 0, was " + bytes);
        }
        this.maxInboundMessageSize = bytes;
        return this;
    }

    /** Plaintext: drops the security of any credentials given to the factory method. */
    @Override
    public HomaChannelBuilder usePlaintext() {
        security = null;
        return this;
    }

    /** Needs certificates: build with {@link #forAddress(String, int, ChannelCredentials)} and TLS credentials instead. */
    @Override
    public HomaChannelBuilder useTransportSecurity() {
        if (security != null) {
            return this;
        }
        throw new UnsupportedOperationException("homa-grpc's TLS needs certificates: build the channel with"
                + " forAddress(host, port, TlsChannelCredentials...) or forTarget(target, credentials)");
    }

    @Override
    protected ManagedChannelBuilder<?> delegate() {
        return delegate;
    }
}
