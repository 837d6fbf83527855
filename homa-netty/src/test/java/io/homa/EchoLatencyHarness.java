package io.homa;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.ReferenceCountUtil;

import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * 100-byte echo round trips on loopback, closed loop (one call at a time, the caller waiting on a
 * future): Homa against a raw Netty UDP echo (the floor: one datagram each way, no protocol) and a
 * Netty TCP echo (TCP_NODELAY, 4-byte length prefix, one connection), all on the same Netty
 * transport in one run. Every variant pays the same hand-offs: the caller's thread into the event
 * loop, and the loop back to the waiting caller.
 *
 * <p>Run (from the repository root, after {@code mvn -B -o -q install -pl homa-core -DskipTests}):
 * <pre>
 * mvn -B -o -q test-compile dependency:build-classpath -pl homa-netty -Dmdep.includeScope=test -Dmdep.outputFile=target/cp.txt
 * java -cp homa-netty/target/classes:homa-netty/target/test-classes:$(cat homa-netty/target/cp.txt) io.homa.EchoLatencyHarness [calls]
 * </pre>
 * A simple harness: the full benchmarks (JMH, open-loop load) live in homa-bench.
 */
public final class EchoLatencyHarness {
    private static final int SIZE = 100;

    private EchoLatencyHarness() {
    }

    public static void main(String[] args) throws Exception {
        int calls = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        boolean epoll = Epoll.isAvailable();
        System.out.printf(Locale.ROOT, "100 B echo on loopback, %d calls after %d warm-up, transport %s, %d cores%n",
                calls, calls, epoll ? "epoll" : "nio", Runtime.getRuntime().availableProcessors());
        System.out.printf(Locale.ROOT, "%-34s %9s %9s %9s%n", "", "p50 us", "p99 us", "p99.9 us");
        homa("Homa (handlers on executor)", Loopback.config(), calls);
        homa("Homa (inline execution)", Loopback.config().inlineExecution(true), calls);
        homa("Homa (inline, busy poll)", Loopback.config().inlineExecution(true).busyPoll(true), calls);
        udp(epoll, calls);
        tcp(epoll, calls);
    }

    private static void homa(String name, HomaConfig.Builder config, int calls) throws Exception {
        HomaConfig c = config.build();
        try (HomaSocket server = HomaSocket.open(c); HomaSocket client = HomaSocket.open(c)) {
            server.serve(r -> r.reply(r.toByteArray()));
            InetSocketAddress to = server.localAddress();
            byte[] request = new byte[SIZE];
            measure(name, calls, () -> client.call(to, request));
        }
    }

    private static void udp(boolean epoll, int calls) throws Exception {
        MultiThreadIoEventLoopGroup group = new MultiThreadIoEventLoopGroup(2, factory(epoll));
        try {
            Channel server = new Bootstrap().group(group)
                    .channelFactory(() -> epoll ? new EpollDatagramChannel() : new NioDatagramChannel())
                    .handler(new ChannelInboundHandlerAdapter() {
                        @Override
                        public void channelRead(ChannelHandlerContext ctx, Object msg) {
                            DatagramPacket p = (DatagramPacket) msg;
                            ctx.writeAndFlush(new DatagramPacket(p.content(), p.sender()));
                        }
                    }).bind(new InetSocketAddress(Loopback.HOST, 0)).sync().channel();
            Waiter waiter = new Waiter();
            Channel client = new Bootstrap().group(group)
                    .channelFactory(() -> epoll ? new EpollDatagramChannel() : new NioDatagramChannel())
                    .handler(new ChannelInboundHandlerAdapter() {
                        @Override
                        public void channelRead(ChannelHandlerContext ctx, Object msg) {
                            ReferenceCountUtil.release(msg);
                            waiter.done();
                        }
                    }).bind(new InetSocketAddress(Loopback.HOST, 0)).sync().channel();
            InetSocketAddress to = (InetSocketAddress) server.localAddress();
            measure("raw Netty UDP echo", calls, () -> {
                CompletableFuture<Object> f = waiter.next();
                client.writeAndFlush(new DatagramPacket(client.alloc().directBuffer(SIZE).writeZero(SIZE), to));
                return f;
            });
            client.close().sync();
            server.close().sync();
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    private static void tcp(boolean epoll, int calls) throws Exception {
        MultiThreadIoEventLoopGroup group = new MultiThreadIoEventLoopGroup(2, factory(epoll));
        try {
            Supplier<ServerChannel> serverFactory = () -> epoll ? new EpollServerSocketChannel() : new NioServerSocketChannel();
            Channel server = new ServerBootstrap().group(group).channelFactory(serverFactory::get)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(new Frames(frame -> ch.writeAndFlush(frame)));
                        }
                    }).bind(new InetSocketAddress(Loopback.HOST, 0)).sync().channel();
            Waiter waiter = new Waiter();
            Channel client = new Bootstrap().group(group)
                    .channelFactory(() -> epoll ? new EpollSocketChannel() : new NioSocketChannel())
                    .option(ChannelOption.TCP_NODELAY, true)
                    .handler(new Frames(frame -> {
                        frame.release();
                        waiter.done();
                    })).connect(server.localAddress()).sync().channel();
            measure("Netty TCP echo (1 connection)", calls, () -> {
                CompletableFuture<Object> f = waiter.next();
                client.writeAndFlush(client.alloc().directBuffer(4 + SIZE).writeInt(SIZE).writeZero(SIZE));
                return f;
            });
            client.close().sync();
            server.close().sync();
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    private static IoHandlerFactory factory(boolean epoll) {
        return epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    }

    /** Warm-up, then {@code calls} closed-loop round trips; prints the percentiles. */
    private static void measure(String name, int calls, Supplier<CompletableFuture<?>> call) throws Exception {
        for (int i = 0; i < calls; i++) {
            call.get().get(10, TimeUnit.SECONDS);
        }
        long[] nanos = new long[calls];
        for (int i = 0; i < calls; i++) {
            long t0 = System.nanoTime();
            call.get().get(10, TimeUnit.SECONDS);
            nanos[i] = System.nanoTime() - t0;
        }
        Arrays.sort(nanos);
        System.out.printf(Locale.ROOT, "%-34s %9.1f %9.1f %9.1f%n", name, nanos[calls / 2] / 1e3,
                nanos[(int) (calls * 0.99)] / 1e3, nanos[(int) (calls * 0.999)] / 1e3);
    }

    /** One outstanding call's future, completed by the event loop when the echo arrives. */
    private static final class Waiter {
        private volatile CompletableFuture<Object> current;

        CompletableFuture<Object> next() {
            CompletableFuture<Object> f = new CompletableFuture<>();
            current = f;
            return f;
        }

        void done() {
            current.complete(Boolean.TRUE);
        }
    }

    /** Splits a TCP stream into length-prefixed frames (4-byte length, then the bytes). */
    private static final class Frames extends ChannelInboundHandlerAdapter {
        private final java.util.function.Consumer<ByteBuf> onFrame;
        private ByteBuf pending;

        Frames(java.util.function.Consumer<ByteBuf> onFrame) {
            this.onFrame = onFrame;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            if (pending == null) {
                pending = ctx.alloc().buffer(4 + SIZE);
            }
            pending.writeBytes(in);
            in.release();
            while (pending.readableBytes() >= 4 && pending.readableBytes() >= 4 + pending.getInt(pending.readerIndex())) {
                int length = pending.getInt(pending.readerIndex());
                onFrame.accept(pending.readRetainedSlice(4 + length));
            }
            pending.discardReadBytes();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (pending != null) {
                pending.release();
                pending = null;
            }
        }
    }
}
