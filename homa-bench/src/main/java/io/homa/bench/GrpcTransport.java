package io.homa.bench;

import io.grpc.CallOptions;
import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.netty.channel.EventLoopGroup;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * {@code grpc}: grpc-java over Netty HTTP/2 (the RPC stack a Java service would pick today), one
 * unary method whose request and reply are plain byte arrays (no Protocol Buffers). {@code grpc}
 * carries every call of a client over one {@link ManagedChannel} (one HTTP/2 connection, calls as
 * streams on it); {@code grpc-pool} spreads them round-robin over several channels.
 *
 * <p>Like the other baselines, the server has one event loop thread and runs the echo on it
 * ({@code directExecutor}), and each client has its own event loop thread on which its futures
 * complete. Flow control windows and everything else are grpc-java's defaults.
 */
public final class GrpcTransport implements Transport {
    /** Largest message either side accepts (grpc-java's default is 4 MiB). */
    public static final int MAX_MESSAGE = 16 << 20;
    /** Channels of a {@code grpc-pool} client. */
    public static final int POOL_CHANNELS = 4;

    /** The echo method: {@code /homa.bench.Echo/Call}, bytes in, the same bytes out. */
    static final MethodDescriptor<byte[], byte[]> ECHO = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName("homa.bench.Echo", "Call"))
            .setRequestMarshaller(new BytesMarshaller())
            .setResponseMarshaller(new BytesMarshaller())
            .build();

    /**
     * grpc-java logs through java.util.logging; at the end of a run the calls still in flight are
     * cancelled, and its server logs each as a warning with a stack trace. Only errors are kept
     * (held here so that the setting is not collected with the logger).
     */
    private static final Logger GRPC_LOG = Logger.getLogger("io.grpc");

    static {
        GRPC_LOG.setLevel(Level.SEVERE);
    }

    private final int channels;

    private GrpcTransport(int channels) {
        this.channels = channels;
    }

    /** One channel per client. */
    public static GrpcTransport single() {
        return new GrpcTransport(1);
    }

    /** {@link #POOL_CHANNELS} channels per client. */
    public static GrpcTransport pool() {
        return new GrpcTransport(POOL_CHANNELS);
    }

    @Override
    public String name() {
        return channels == 1 ? Transports.GRPC : Transports.GRPC_POOL;
    }

    @Override
    public int maxMessageLength() {
        return MAX_MESSAGE;
    }

    @Override
    public EchoServer startServer() {
        return new EchoServerImpl();
    }

    @Override
    public EchoClient connect(InetSocketAddress server) {
        return new Client(server, channels);
    }

    @Override
    public String toString() {
        return name();
    }

    /**
     * Byte arrays as gRPC messages. The stream it hands gRPC tells its length and drains in one
     * write (as the Protocol Buffers marshaller's does), so gRPC frames it without a staging copy.
     */
    static final class BytesMarshaller implements MethodDescriptor.Marshaller<byte[]> {
        @Override
        public InputStream stream(byte[] value) {
            return new BytesStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                if (stream instanceof KnownLength) {
                    int n = stream.available();
                    byte[] out = new byte[n];
                    if (stream.readNBytes(out, 0, n) != n) {
                        throw new IOException("message shorter than its known length " + n);
                    }
                    return out;
                }
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private static final class BytesStream extends ByteArrayInputStream implements KnownLength, Drainable {
        BytesStream(byte[] bytes) {
            super(bytes);
        }

        @Override
        public int drainTo(OutputStream target) throws IOException {
            int n = count - pos;
            target.write(buf, pos, n);
            pos = count;
            return n;
        }
    }

    private static final class EchoServerImpl implements EchoServer {
        private final EventLoopGroup group = NettyIo.newGroup(1, "grpc-server");
        private final Server server;
        private final InetSocketAddress address;
        private final AtomicBoolean closed = new AtomicBoolean();

        EchoServerImpl() {
            ServerServiceDefinition echo = ServerServiceDefinition.builder("homa.bench.Echo")
                    .addMethod(ECHO, ServerCalls.asyncUnaryCall((byte[] request, StreamObserver<byte[]> reply) -> {
                        reply.onNext(request);
                        reply.onCompleted();
                    }))
                    .build();
            try {
                server = NettyServerBuilder.forAddress(NettyIo.anyLoopbackPort())
                        .channelType(NettyIo.serverSocketChannel())
                        .bossEventLoopGroup(group)
                        .workerEventLoopGroup(group)
                        .directExecutor()
                        .maxInboundMessageSize(MAX_MESSAGE)
                        .addService(echo)
                        .build()
                        .start();
            } catch (IOException | RuntimeException e) {
                NettyIo.shutdown(group);
                throw new IllegalStateException("grpc server did not start", e);
            }
            address = new InetSocketAddress(NettyIo.LOOPBACK, server.getPort());
        }

        @Override
        public InetSocketAddress address() {
            return address;
        }

        @Override
        public void close() {
            if (closed.compareAndSet(false, true)) {
                server.shutdownNow();
                try {
                    server.awaitTermination(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                NettyIo.shutdown(group);
            }
        }
    }

    private static final class Client implements EchoClient {
        private final EventLoopGroup group;
        private final List<ManagedChannel> channels = new ArrayList<>();
        private final AtomicInteger next = new AtomicInteger();
        private final AtomicBoolean closed = new AtomicBoolean();

        Client(InetSocketAddress server, int count) {
            group = NettyIo.newGroup(1, "grpc-client");
            for (int i = 0; i < count; i++) {
                channels.add(NettyChannelBuilder.forAddress(server)
                        .channelType(NettyIo.socketChannel())
                        .eventLoopGroup(group)
                        .directExecutor()
                        .usePlaintext()
                        .maxInboundMessageSize(MAX_MESSAGE)
                        .build());
            }
            // Connect now, so that a bad address fails here as it does for the other transports.
            try {
                call(new byte[0]).get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                close();
                throw new IllegalStateException("grpc cannot reach " + server + ": " + e, e);
            }
        }

        @Override
        public CompletableFuture<byte[]> call(byte[] request) {
            if (request.length > MAX_MESSAGE) {
                throw new IllegalArgumentException("request of " + request.length + " bytes exceeds " + MAX_MESSAGE);
            }
            CompletableFuture<byte[]> result = new CompletableFuture<>();
            if (closed.get()) {
                result.completeExceptionally(new ClosedChannelException());
                return result;
            }
            ManagedChannel channel = channels.get(Math.floorMod(next.getAndIncrement(), channels.size()));
            ClientCalls.asyncUnaryCall(channel.newCall(ECHO, CallOptions.DEFAULT), request, new StreamObserver<>() {
                @Override
                public void onNext(byte[] reply) {
                    result.complete(reply);
                }

                @Override
                public void onError(Throwable t) {
                    result.completeExceptionally(t);
                }

                @Override
                public void onCompleted() {
                    if (!result.isDone()) {
                        result.completeExceptionally(new IllegalStateException("grpc call ended without a reply"));
                    }
                }
            });
            return result;
        }

        @Override
        public void close() {
            if (closed.compareAndSet(false, true)) {
                for (ManagedChannel c : channels) {
                    c.shutdownNow();
                }
                for (ManagedChannel c : channels) {
                    try {
                        c.awaitTermination(5, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                NettyIo.shutdown(group);
            }
        }
    }
}
