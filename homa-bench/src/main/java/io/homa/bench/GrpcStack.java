package io.homa.bench;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.homa.HomaConfig;
import io.homa.grpc.HomaChannelBuilder;
import io.homa.grpc.HomaServerBuilder;
import io.netty.channel.EventLoopGroup;

import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * What lies under gRPC in {@link GrpcTransport}: grpc-java's HTTP/2 over Netty, or homa-grpc.
 * Everything above (the echo service, the byte-array marshaller, the client) is the same for both.
 */
enum GrpcStack {
    /** grpc-netty: HTTP/2 on TCP, on the benchmark's own event loop group. */
    NETTY {
        @Override
        Server startServer(ServerServiceDefinition service, EventLoopGroup group, int maxMessage, boolean direct)
                throws IOException {
            NettyServerBuilder b = NettyServerBuilder.forAddress(NettyIo.anyPort())
                    .channelType(NettyIo.serverSocketChannel())
                    .bossEventLoopGroup(group)
                    .workerEventLoopGroup(group)
                    .maxInboundMessageSize(maxMessage)
                    .addService(service);
            return (direct ? b.directExecutor() : b).build().start();
        }

        @Override
        ManagedChannel channel(InetSocketAddress server, EventLoopGroup group, int maxMessage, boolean direct) {
            NettyChannelBuilder b = NettyChannelBuilder.forAddress(server)
                    .channelType(NettyIo.socketChannel())
                    .eventLoopGroup(group)
                    .usePlaintext()
                    .maxInboundMessageSize(maxMessage);
            return (direct ? b.directExecutor() : b).build();
        }
    },
    /**
     * homa-grpc: each unary call one Homa RPC. The sockets have their own event loops (the group is
     * unused); they bind the loopback address so that the MTU, hence the segment size, is
     * loopback's, as for {@link HomaTransport}. With {@code direct}, the service and the callbacks
     * run on the sockets' handler executors (homa-grpc's default: they may block).
     */
    HOMA {
        @Override
        Server startServer(ServerServiceDefinition service, EventLoopGroup group, int maxMessage, boolean direct)
                throws IOException {
            return homaServer(service, maxMessage, direct, false);
        }

        @Override
        ManagedChannel channel(InetSocketAddress server, EventLoopGroup group, int maxMessage, boolean direct) {
            return homaChannel(server, maxMessage, direct, false);
        }
    },
    /**
     * homa-grpc with the sockets' inline execution: with {@code direct}, the service and the
     * callbacks run on the sockets' event loops, as grpc-netty runs them under
     * {@code directExecutor()} (docs/grpc.md: the choice for code that never blocks).
     */
    HOMA_INLINE {
        @Override
        Server startServer(ServerServiceDefinition service, EventLoopGroup group, int maxMessage, boolean direct)
                throws IOException {
            return homaServer(service, maxMessage, direct, true);
        }

        @Override
        ManagedChannel channel(InetSocketAddress server, EventLoopGroup group, int maxMessage, boolean direct) {
            return homaChannel(server, maxMessage, direct, true);
        }
    };

    private static Server homaServer(ServerServiceDefinition service, int maxMessage, boolean direct, boolean inline)
            throws IOException {
        HomaServerBuilder b = HomaServerBuilder.forAddress(NettyIo.anyPort())
                .homaConfig(loopback(inline))
                .maxInboundMessageSize(maxMessage)
                .addService(service);
        return (direct ? b.directExecutor() : b).build().start();
    }

    private static ManagedChannel homaChannel(InetSocketAddress server, int maxMessage, boolean direct, boolean inline) {
        HomaChannelBuilder b = HomaChannelBuilder.forAddress(server.getHostString(), server.getPort())
                .homaConfig(loopback(inline))
                .maxInboundMessageSize(maxMessage);
        return (direct ? b.directExecutor() : b).build();
    }

    private static HomaConfig loopback(boolean inline) {
        return HomaConfig.builder()
                .bindAddress(new InetSocketAddress(NettyIo.HOST, 0))
                .inlineExecution(inline)
                .build();
    }

    /**
     * The echo server; {@code direct}: the service runs on the transport's own thread
     * ({@code directExecutor()}), else on grpc-java's default executor, as most services run.
     */
    abstract Server startServer(ServerServiceDefinition service, EventLoopGroup group, int maxMessage, boolean direct)
            throws IOException;

    /** A channel; {@code direct}: callbacks on the transport's thread, else on grpc-java's default executor. */
    abstract ManagedChannel channel(InetSocketAddress server, EventLoopGroup group, int maxMessage, boolean direct);
}
