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
     * loopback's, as for {@link HomaTransport}. With {@code direct}, the service runs on the server
     * socket's handler executor (homa-grpc's default: it may block) and the callbacks on the
     * client socket's event loop.
     */
    HOMA(false),
    /**
     * homa-grpc with the sockets' inline execution: with {@code direct}, the service and the
     * callbacks run on the sockets' event loops, as grpc-netty runs them under
     * {@code directExecutor()} (docs/grpc.md: the choice for code that never blocks).
     */
    HOMA_INLINE(true);

    /** homa-grpc only: the sockets run their part of a call on their event loops. */
    private final boolean inline;

    GrpcStack() {
        this(false);
    }

    GrpcStack(boolean inline) {
        this.inline = inline;
    }

    /**
     * The echo server; {@code direct}: the service runs on the transport's own thread
     * ({@code directExecutor()}), else on grpc-java's default executor, as most services run.
     * homa-grpc's here, grpc-netty's in {@link #NETTY}.
     */
    Server startServer(ServerServiceDefinition service, EventLoopGroup group, int maxMessage, boolean direct)
            throws IOException {
        HomaServerBuilder b = HomaServerBuilder.forAddress(NettyIo.anyPort())
                .homaConfig(loopback())
                .maxInboundMessageSize(maxMessage)
                .addService(service);
        return (direct ? b.directExecutor() : b).build().start();
    }

    /**
     * A channel; {@code direct}: callbacks on the transport's thread, else on grpc-java's default
     * executor. homa-grpc's here, grpc-netty's in {@link #NETTY}.
     */
    ManagedChannel channel(InetSocketAddress server, EventLoopGroup group, int maxMessage, boolean direct) {
        HomaChannelBuilder b = HomaChannelBuilder.forAddress(server.getHostString(), server.getPort())
                .homaConfig(loopback())
                .maxInboundMessageSize(maxMessage);
        return (direct ? b.directExecutor() : b).build();
    }

    private HomaConfig loopback() {
        return HomaConfig.builder()
                .bindAddress(new InetSocketAddress(NettyIo.HOST, 0))
                .inlineExecution(inline)
                .build();
    }
}
