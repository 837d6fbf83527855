package io.homa.grpc;

import com.google.common.util.concurrent.MoreExecutors;
import io.grpc.ForwardingServerBuilder;
import io.grpc.ServerBuilder;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.ServerImplBuilder;
import io.homa.HomaBadArgumentException;
import io.homa.HomaConfig;
import io.homa.HomaSecurity;
import io.grpc.InsecureServerCredentials;
import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;

import java.io.File;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.concurrent.Executor;

/**
 * Builds a gRPC {@link io.grpc.Server} that serves over Homa instead of HTTP/2:
 *
 * <pre>{@code
 * Server server = HomaServerBuilder.forPort(50051).addService(new GreeterImpl()).build().start();
 * }</pre>
 *
 * <p>{@code addService}, {@code executor}, {@code intercept} and the rest are grpc-java's own.
 * The server opens one Homa socket at {@code start()} on the given address (configured with
 * {@link #homaConfig(HomaConfig)}; its bind address is replaced by the builder's) and closes it once
 * the server has shut down and its last call has ended.
 *
 * <p>A unary call's Homa request stays open while its handler runs, so the socket's
 * {@link HomaConfig#requestTimeout()} bounds a unary handler's time: by default this builder sets
 * it to a day, as gRPC has no such limit; a {@code homaConfig} of your own keeps its value.
 * TLS: {@link #forPort(int, ServerCredentials)}; messages are never compressed. The default maximum inbound message is
 * 4 MiB, as for any grpc-java server; raise it with {@link #maxInboundMessageSize(int)}.
 *
 * <p><b>Threads and buffers.</b> A builder is not thread-safe. Service methods run on the server's
 * executor ({@code executor(..)}, or grpc-java's default), never on a Homa thread unless you choose
 * {@code directExecutor()}. With grpc-java's executor (the default) the socket hands each frame
 * to it straight from its event loop (one hand-off per call: the frame is only decoded there,
 * which never blocks). With {@code directExecutor()} service methods run on the Homa socket's
 * handler executor, where they may block but hold up other calls' frames; to run them on the
 * event loop itself (one hand-off fewer, but a blocking method then stops the socket), add
 * {@code homaConfig(HomaConfig.builder().inlineExecution(true).build())}: only for methods that
 * never block. docs/grpc.md counts the hand-offs of each choice. Messages are not copied on the
 * way in: the marshaller reads a stream over the memory Homa received them in
 * ({@code KnownLength}, {@code HasByteBuffer}, {@code Detachable}; grpc-java closes it after
 * parsing, which releases it). On the way out, a message is drained from the marshaller's stream
 * into one pooled buffer, which the socket sends and then releases.
 *
 * <p><b>Failures.</b> {@code build().start()} throws {@link java.io.IOException} if the Homa
 * socket cannot be bound; the builder's methods throw {@link HomaBadArgumentException} for
 * arguments that can never work and {@link UnsupportedOperationException} for
 * {@code useTransportSecurity} (use TLS credentials).
 */
public final class HomaServerBuilder extends ForwardingServerBuilder<HomaServerBuilder> {
    private final ServerImplBuilder delegate;
    private final InetSocketAddress address;
    private HomaConfig homaConfig;
    /** From the server's credentials; null for plaintext. */
    private HomaSecurity security;
    private int maxInboundMessageSize = GrpcUtil.DEFAULT_MAX_MESSAGE_SIZE;
    /** Service methods run on the transport's thread ({@code directExecutor()}). */
    private boolean directExecutor;

    private HomaServerBuilder(InetSocketAddress address) {
        this.address = address;
        this.delegate = new ServerImplBuilder((tracerFactories, metricRecorder) ->
                new HomaServer(effectiveConfig(), tracerFactories, maxInboundMessageSize));
    }

    /** A server on every local address, on Homa (UDP) port {@code port} (0: a free one). */
    public static HomaServerBuilder forPort(int port) {
        if (port < 0 || port > 65_535) {
            throw new HomaBadArgumentException("port must be 0..65535, was " + port);
        }
        return new HomaServerBuilder(new InetSocketAddress(port));
    }

    /**
     * A server on every local address, on Homa port {@code port}, with {@code credentials}:
     * {@link TlsServerCredentials} (this server's certificate, the roots its clients' certificates
     * must chain to, and {@code ClientAuth.REQUIRE}: Homa's key exchange is always mutual) make its
     * socket a {@link io.homa.HomaSecurity#mutualTls} one, which also listens on TCP at the port
     * number for key exchanges; each call's attributes carry the client's TLS session
     * ({@code Grpc.TRANSPORT_ATTR_SSL_SESSION}). {@link InsecureServerCredentials}: plaintext.
     *
     * @throws HomaBadArgumentException if the port is out of range, or the credentials are of
     *                                  another kind, ask for a feature Homa cannot honour, or do
     *                                  not require client certificates
     */
    public static HomaServerBuilder forPort(int port, ServerCredentials credentials) {
        HomaSecurity s = TlsCredentials.forServer(credentials);
        HomaServerBuilder b = forPort(port);
        b.security = s;
        return b;
    }

    /**
     * A server on one local address.
     *
     * @throws HomaBadArgumentException unless {@code address} is a resolved {@link InetSocketAddress}
     */
    public static HomaServerBuilder forAddress(SocketAddress address) {
        if (!(address instanceof InetSocketAddress) || ((InetSocketAddress) address).isUnresolved()) {
            throw new HomaBadArgumentException("address must be a resolved InetSocketAddress, was " + address);
        }
        return new HomaServerBuilder((InetSocketAddress) address);
    }

    /**
     * The settings of the server's Homa socket (timeouts, executor, event loops...); its bind
     * address is replaced by the builder's.
     *
     * @throws HomaBadArgumentException if {@code config} is null
     */
    public HomaServerBuilder homaConfig(HomaConfig config) {
        if (config == null) {
            throw new HomaBadArgumentException("homaConfig must not be null (use HomaConfig.defaults())");
        }
        this.homaConfig = config;
        return this;
    }

    /** The socket's settings, with its threads chosen by {@link SocketThreads}. */
    private HomaConfig effectiveConfig() {
        HomaConfig config = homaConfig == null
                ? HomaConfig.builder().bindAddress(address).requestTimeout(StreamBase.NO_DEADLINE).build()
                : homaConfig.toBuilder().bindAddress(address).build();
        if (security != null) {
            config = config.toBuilder().security(security).build();
        }
        return SocketThreads.forServer(config, directExecutor);
    }

    /** The largest message the server accepts (default 4 MiB); a larger one cancels its call with RESOURCE_EXHAUSTED. */
    @Override
    public HomaServerBuilder maxInboundMessageSize(int bytes) {
        if (bytes < 0) {
            throw new HomaBadArgumentException("maxInboundMessageSize must be >= 0, was " + bytes);
        }
        this.maxInboundMessageSize = bytes;
        return this;
    }

    /** Service methods run on the thread that handles the frame (see the class comment for which). */
    @Override
    public HomaServerBuilder directExecutor() {
        directExecutor = true;
        return super.directExecutor();
    }

    /** Service methods run on {@code executor}; grpc-java's direct executor counts as {@link #directExecutor()}. */
    @Override
    public HomaServerBuilder executor(Executor executor) {
        directExecutor = executor == MoreExecutors.directExecutor();
        return super.executor(executor);
    }

    /** Needs the clients' roots too: build with {@link #forPort(int, ServerCredentials)} and TLS credentials instead. */
    @Override
    public HomaServerBuilder useTransportSecurity(File certChain, File privateKey) {
        throw new UnsupportedOperationException("Homa's key exchange is always mutual: build the server with"
                + " forPort(port, TlsServerCredentials with clientAuth(REQUIRE) and the clients' roots)");
    }

    @Override
    protected ServerBuilder<?> delegate() {
        return delegate;
    }
}
