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
        Server startServer(ServerServiceDefinition service, EventLoopGroup group, int maxMessage) throws IOException {
            return NettyServerBuilder.forAddress(NettyIo.anyPort())
                    .channelType(NettyIo.serverSocketChannel())
                    .bossEventLoopGroup(group)
                    .workerEventLoopGroup(group)
                    .directExecutor()
                    .maxInboundMessageSize(maxMessage)
                    .addService(service)
                    .build()
                    .start();
        }

        @Override
        ManagedChannel channel(InetSocketAddress server, EventLoopGroup group, int maxMessage) {
            return NettyChannelBuilder.forAddress(server)
                    .channelType(NettyIo.socketChannel())
                    .eventLoopGroup(group)
                    .directExecutor()
                    .usePlaintext()
                    .maxInboundMessageSize(maxMessage)
                    .build();
        }
    },
    /**
     * homa-grpc: each unary call one Homa RPC. The sockets have their own event loops (the group is
     * unused); they bind the loopback address so that the MTU, hence the segment size, is
     * loopback's, as for {@link HomaTransport}.
     */
    HOMA {
        @Override
        Server startServer(ServerServiceDefinition service, EventLoopGroup group, int maxMessage) throws IOException {
            return HomaServerBuilder.forAddress(NettyIo.anyPort())
                    .homaConfig(loopback())
                    .directExecutor()
                    .maxInboundMessageSize(maxMessage)
                    .addService(service)
                    .build()
                    .start();
        }

        @Override
        ManagedChannel channel(InetSocketAddress server, EventLoopGroup group, int maxMessage) {
            return HomaChannelBuilder.forAddress(server.getHostString(), server.getPort())
                    .homaConfig(loopback())
                    .directExecutor()
                    .maxInboundMessageSize(maxMessage)
                    .build();
        }

        private HomaConfig loopback() {
            return HomaConfig.builder().bindAddress(new InetSocketAddress(NettyIo.HOST, 0)).build();
        }
    };

    abstract Server startServer(ServerServiceDefinition service, EventLoopGroup group, int maxMessage) throws IOException;

    abstract ManagedChannel channel(InetSocketAddress server, EventLoopGroup group, int maxMessage);
}
