package io.homa.grpc;

import io.grpc.ForwardingServerBuilder;
import io.grpc.ServerBuilder;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.ServerImplBuilder;
import io.homa.HomaBadArgumentException;
import io.homa.HomaConfig;

import java.io.File;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

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
 * Homa has no TLS, and messages are never compressed. The default maximum inbound message is
 * 4 MiB, as for any grpc-java server; raise it with {@link #maxInboundMessageSize(int)}.
 *
 * <p><b>Threads and buffers.</b> A builder is not thread-safe. Service methods run on the server's
 * executor ({@code executor(..)}, or grpc-java's default), never on a Homa thread unless you choose
 * {@code directExecutor()} (then on the Homa socket's executor, where they may block but hold up
 * other calls' frames). Messages are copied in and out of Homa messages: no buffer passes between
 * your code and the transport.
 *
 * <p><b>Failures.</b> {@code build().start()} throws {@link java.io.IOException} if the Homa
 * socket cannot be bound; the builder's methods throw {@link HomaBadArgumentException} for
 * arguments that can never work and {@link UnsupportedOperationException} for TLS.
 */
public final class HomaServerBuilder extends ForwardingServerBuilder<HomaServerBuilder> {
    private final ServerImplBuilder delegate;
    private final InetSocketAddress address;
    private HomaConfig homaConfig;
    private int maxInboundMessageSize = GrpcUtil.DEFAULT_MAX_MESSAGE_SIZE;

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

    private HomaConfig effectiveConfig() {
        if (homaConfig == null) {
            return HomaConfig.builder().bindAddress(address).requestTimeout(StreamBase.NO_DEADLINE).build();
        }
        return homaConfig.toBuilder().bindAddress(address).build();
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

    /** Homa has no TLS. */
    @Override
    public HomaServerBuilder useTransportSecurity(File certChain, File privateKey) {
        throw new UnsupportedOperationException("homa-grpc has no transport security");
    }

    @Override
    protected ServerBuilder<?> delegate() {
        return delegate;
    }
}
