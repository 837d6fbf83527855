package io.homa.grpc;

import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannelProvider;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Collection;
import java.util.List;

/**
 * Makes {@code Grpc.newChannelBuilder("homa://host:port", InsecureChannelCredentials.create())}
 * build a Homa channel. Registered with grpc-java through {@code META-INF/services}; applications
 * do not call it. Its priority (4) is below the HTTP/2 transports' (5), so that
 * {@code ManagedChannelBuilder.forTarget("host:port")} keeps choosing them when they are present:
 * {@code homa://} targets still come here, because they resolve to an address type only this
 * provider takes.
 */
public final class HomaChannelProvider extends ManagedChannelProvider {
    @Override
    protected boolean isAvailable() {
        return true;
    }

    @Override
    protected int priority() {
        return 4;
    }

    @Override
    protected HomaChannelBuilder builderForAddress(String name, int port) {
        return HomaChannelBuilder.forAddress(name, port);
    }

    @Override
    protected HomaChannelBuilder builderForTarget(String target) {
        return HomaChannelBuilder.forTarget(target);
    }

    @Override
    protected NewChannelBuilderResult newChannelBuilder(String target, ChannelCredentials credentials) {
        try {
            return NewChannelBuilderResult.channelBuilder(HomaChannelBuilder.forTarget(target, credentials));
        } catch (io.homa.HomaBadArgumentException e) {
            return NewChannelBuilderResult.error(e.getMessage());
        }
    }

    @Override
    protected Collection<Class<? extends SocketAddress>> getSupportedSocketAddressTypes() {
        return List.of(HomaSocketAddress.class, InetSocketAddress.class);
    }
}
