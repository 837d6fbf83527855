package io.homa.grpc;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.homa.HomaConfig;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The transports the same gRPC tests run over: Homa, and grpc-netty (HTTP/2) for comparison. */
enum Transport {
    HOMA, NETTY;

    static final String HOST = "127.0.0.1";

    /** A started server and a channel to it. */
    record Pair(Server server, ManagedChannel channel) implements AutoCloseable {
        @Override
        public void close() {
            channel.shutdownNow();
            server.shutdownNow();
            try {
                assertTrue(channel.awaitTermination(10, TimeUnit.SECONDS), "channel terminated");
                assertTrue(server.awaitTermination(10, TimeUnit.SECONDS), "server terminated");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while closing", e);
            }
        }
    }

    Pair start(ServerServiceDefinition service, int maxMessage) throws IOException {
        return start(service, maxMessage, loopback(), loopback());
    }

    /** Homa's sockets get the given configurations (netty ignores them). */
    Pair start(ServerServiceDefinition service, int maxMessage, HomaConfig serverConfig, HomaConfig clientConfig)
            throws IOException {
        InetSocketAddress any = new InetSocketAddress(HOST, 0);
        if (this == HOMA) {
            Server server = HomaServerBuilder.forAddress(any).homaConfig(serverConfig).addService(service)
                    .maxInboundMessageSize(maxMessage).build().start();
            ManagedChannel channel = HomaChannelBuilder.forAddress(HOST, server.getPort()).homaConfig(clientConfig)
                    .maxInboundMessageSize(maxMessage).build();
            return new Pair(server, channel);
        }
        Server server = NettyServerBuilder.forAddress(any).addService(service)
                .maxInboundMessageSize(maxMessage).build().start();
        ManagedChannel channel = NettyChannelBuilder.forAddress(HOST, server.getPort()).usePlaintext()
                .maxInboundMessageSize(maxMessage).build();
        return new Pair(server, channel);
    }

    /** A Homa configuration on loopback; unary handlers may take long (as the server builder's default). */
    static HomaConfig loopback() {
        return loopbackBuilder().build();
    }

    static HomaConfig.Builder loopbackBuilder() {
        return HomaConfig.builder().bindAddress(new InetSocketAddress(HOST, 0))
                .requestTimeout(java.time.Duration.ofMinutes(5));
    }
}
