package io.homa.grpc;

import io.grpc.ChannelCredentials;
import io.grpc.ChannelLogger;
import io.grpc.internal.ClientTransportFactory;
import io.grpc.internal.ConnectionClientTransport;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.SharedResourceHolder;
import io.homa.HomaConfig;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Made once per channel: owns the channel's {@link ClientEndpoint} (its Homa socket, opened here,
 * closed with the channel) and makes one {@link HomaClientTransport} per server address.
 */
final class HomaTransportFactory implements ClientTransportFactory {
    /** How long the PING that "connects" a transport may take. */
    private static final long CONNECT_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(20);

    private final ClientEndpoint endpoint;
    private final int maxInboundMessageSize;
    private final ScheduledExecutorService timer = SharedResourceHolder.get(GrpcUtil.TIMER_SERVICE);
    private boolean closed;

    HomaTransportFactory(HomaConfig config, int maxInboundMessageSize) {
        this.endpoint = new ClientEndpoint(config);
        this.maxInboundMessageSize = maxInboundMessageSize;
    }

    ClientEndpoint endpoint() {
        return endpoint;
    }

    int maxInboundMessageSize() {
        return maxInboundMessageSize;
    }

    long connectTimeoutNanos() {
        return CONNECT_TIMEOUT_NANOS;
    }

    @Override
    public ConnectionClientTransport newClientTransport(SocketAddress address, ClientTransportOptions options,
                                                        ChannelLogger channelLogger) {
        if (address instanceof HomaSocketAddress) {
            address = ((HomaSocketAddress) address).address();
        }
        if (!(address instanceof InetSocketAddress) || ((InetSocketAddress) address).isUnresolved()) {
            throw new IllegalArgumentException("homa-grpc needs a resolved InetSocketAddress, got " + address);
        }
        return new HomaClientTransport(this, (InetSocketAddress) address, options.getAuthority(),
                options.getUserAgent(), options.getEagAttributes());
    }

    @Override
    public ScheduledExecutorService getScheduledExecutorService() {
        return timer;
    }

    @Override
    public SwapChannelCredentialsResult swapChannelCredentials(ChannelCredentials channelCreds) {
        return null; // only insecure credentials: Homa has no TLS
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        endpoint.close();
        SharedResourceHolder.release(GrpcUtil.TIMER_SERVICE, timer);
    }

    @Override
    public Collection<Class<? extends SocketAddress>> getSupportedSocketAddressTypes() {
        return List.of(InetSocketAddress.class, HomaSocketAddress.class);
    }
}
