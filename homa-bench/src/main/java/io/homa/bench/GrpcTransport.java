package io.homa.bench;

import io.grpc.CallOptions;
import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
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
 * {@code grpc-homa} is the same service and client over homa-grpc's channel and server (each
 * unary call one Homa RPC), so the two differ only in the transport under gRPC.
 *
 * {@code grpc-default} and {@code grpc-homa-default} are the same two with grpc-java's default
 * executors on both sides (the service and the client's callbacks on grpc-java's shared cached
 * pool), which is what most services run. Under {@code directExecutor()} homa-grpc runs the
 * client's callbacks on its socket's event loop, as grpc-netty does, and the service on the
 * server socket's handler executor (a method may block); {@code grpc-homa-inline} (on request) is
 * {@code grpc-homa} with the server socket's inline execution too, so that the service runs on
 * its event loop as grpc-netty's does under {@code directExecutor()}.
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

    private final String name;
    private final int channels;
    private final GrpcStack stack;
    private final boolean direct;

    private GrpcTransport(String name, int channels, GrpcStack stack, boolean direct) {
        this.name = name;
        this.channels = channels;
        this.stack = stack;
        this.direct = direct;
    }

    /** One HTTP/2 channel per client. */
    public static GrpcTransport single() {
        return new GrpcTransport(Transports.GRPC, 1, GrpcStack.NETTY, true);
    }

    /** {@link #POOL_CHANNELS} HTTP/2 channels per client. */
    public static GrpcTransport pool() {
        return new GrpcTransport(Transports.GRPC_POOL, POOL_CHANNELS, GrpcStack.NETTY, true);
    }

    /** One homa-grpc channel per client. */
    public static GrpcTransport overHoma() {
        return new GrpcTransport(Transports.GRPC_HOMA, 1, GrpcStack.HOMA, true);
    }

    /**
     * One homa-grpc channel per client, {@code directExecutor()} and inline execution on both
     * sides: the service and the callbacks on the sockets' event loops, as {@link #single()} has
     * them on grpc-netty's.
     */
    public static GrpcTransport overHomaInline() {
        return new GrpcTransport(Transports.GRPC_HOMA_INLINE, 1, GrpcStack.HOMA_INLINE, true);
    }

    /** One HTTP/2 channel per client, with grpc-java's default executors on both sides. */
    public static GrpcTransport singleDefaultExecutors() {
        return new GrpcTransport(Transports.GRPC_DEFAULT, 1, GrpcStack.NETTY, false);
    }

    /** One homa-grpc channel per client, with grpc-java's default executors on both sides. */
    public static GrpcTransport overHomaDefaultExecutors() {
        return new GrpcTransport(Transports.GRPC_HOMA_DEFAULT, 1, GrpcStack.HOMA, false);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int maxMessageLength() {
        return MAX_MESSAGE;
    }

    @Override
    public EchoServer startServer() {
        return new EchoServerImpl(stack, direct);
    }

    @Override
    public EchoClient connect(InetSocketAddress server) {
        return new Client(stack, server, channels, direct);
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

        EchoServerImpl(GrpcStack stack, boolean direct) {
            ServerServiceDefinition echo = ServerServiceDefinition.builder("homa.bench.Echo")
                    .addMethod(ECHO, ServerCalls.asyncUnaryCall((byte[] request, StreamObserver<byte[]> reply) -> {
                        reply.onNext(request);
                        reply.onCompleted();
                    }))
                    .build();
            try {
                server = stack.startServer(echo, group, MAX_MESSAGE, direct);
            } catch (IOException | RuntimeException e) {
                NettyIo.shutdown(group);
                throw new IllegalStateException("grpc server did not start", e);
            }
            address = new InetSocketAddress(NettyIo.HOST, server.getPort());
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

        Client(GrpcStack stack, InetSocketAddress server, int count, boolean direct) {
            group = NettyIo.newGroup(1, "grpc-client");
            for (int i = 0; i < count; i++) {
                channels.add(stack.channel(server, group, MAX_MESSAGE, direct));
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
