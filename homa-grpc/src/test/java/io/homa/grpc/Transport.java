package io.homa.grpc;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.homa.HomaConfig;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

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
                if (!channel.awaitTermination(10, TimeUnit.SECONDS)) {
                    throw new AssertionError("channel not terminated 10 s after shutdownNow: " + channel
                            + "\n" + threadDump());
                }
                if (!server.awaitTermination(10, TimeUnit.SECONDS)) {
                    throw new AssertionError("server not terminated 10 s after shutdownNow: " + server
                            + "\n" + threadDump());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while closing", e);
            }
        }
    }

    /**
     * Every thread's state, held locks and whole stack: what a close that never finished waited
     * for (a channel that never terminated was seen once, 2026-12-07; TransportLifecycleTest has
     * the cause found then).
     */
    static String threadDump() {
        StringBuilder out = new StringBuilder("threads:\n");
        for (ThreadInfo t : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
            out.append('"').append(t.getThreadName()).append("\" ").append(t.getThreadState());
            if (t.getLockName() != null) {
                out.append(" on ").append(t.getLockName());
            }
            if (t.getLockOwnerName() != null) {
                out.append(" owned by \"").append(t.getLockOwnerName()).append('"');
            }
            out.append('\n');
            for (StackTraceElement e : t.getStackTrace()) {
                out.append("    at ").append(e).append('\n');
            }
        }
        return out.toString();
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
