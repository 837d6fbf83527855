package io.homa.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code tcp-pool}: a pool of TCP connections, each carrying one call at a time (the HTTP/1.1
 * pattern). A call takes the most recently used idle connection, or opens a new one when none is
 * idle; a connection goes back to the pool when its reply arrives. The pool grows to the largest
 * number of calls ever outstanding (at most {@code maxConnections}; later calls wait for a
 * connection) and never shrinks while the client is open. Separate connections share no queue
 * above the kernel's, so a short call never waits behind a long one on its connection.
 *
 * <p>Threads: one event loop owns every connection and all pool state; a call costs one hand-off
 * into the loop (none from the loop) and its future completes on the loop.
 */
public final class TcpPoolClient implements EchoClient {
    /** Default cap on connections: well above any load the benchmarks offer. */
    public static final int DEFAULT_MAX_CONNECTIONS = 512;

    private final EventLoopGroup group;
    private final EventLoop loop;
    private final Bootstrap bootstrap;
    private final InetSocketAddress server;
    private final int maxConnections;
    private final AtomicLong ids = new AtomicLong(1);
    private final AtomicBoolean closed = new AtomicBoolean();

    // Pool state, touched only on the loop.
    private final ArrayDeque<Connection> idle = new ArrayDeque<>();
    private final ArrayDeque<Call> waiting = new ArrayDeque<>();
    private final Set<Connection> open = new HashSet<>();
    private int connections;
    private volatile int peakConnections;

    public TcpPoolClient(InetSocketAddress server) {
        this(server, DEFAULT_MAX_CONNECTIONS);
    }

    public TcpPoolClient(InetSocketAddress server, int maxConnections) {
        if (maxConnections < 1) {
            throw new IllegalArgumentException("maxConnections must be at least 1: " + maxConnections);
        }
        this.server = server;
        this.maxConnections = maxConnections;
        group = NettyIo.newGroup(1, "tcp-pool-client");
        loop = group.next();
        bootstrap = new Bootstrap()
                .group(loop)
                .channel(NettyIo.socketChannel())
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.RECVBUF_ALLOCATOR, NettyIo.streamReads());
        // Open one connection up front so that a bad address fails here, as for tcp-single.
        try {
            CompletableFuture<byte[]> probe = new CompletableFuture<>();
            loop.submit(() -> open(new Call(0, null, probe))).syncUninterruptibly();
            probe.join();
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** One request in flight or waiting for a connection. */
    private record Call(long id, ByteBuf frame, CompletableFuture<byte[]> result) {
        void fail(Throwable cause) {
            if (frame != null) {
                frame.release();
            }
            result.completeExceptionally(cause);
        }
    }

    @Override
    public CompletableFuture<byte[]> call(byte[] request) {
        if (request.length > TcpFrames.MAX_PAYLOAD) {
            throw new IllegalArgumentException("request of " + request.length + " bytes exceeds " + TcpFrames.MAX_PAYLOAD);
        }
        CompletableFuture<byte[]> result = new CompletableFuture<>();
        if (closed.get()) {
            result.completeExceptionally(new ClosedChannelException());
            return result;
        }
        long id = ids.getAndIncrement();
        Call call = new Call(id, TcpFrames.encode(ByteBufAllocator.DEFAULT, id, request), result);
        NettyIo.onLoop(loop, () -> dispatch(call), () -> call.fail(new ClosedChannelException()));
        return result;
    }

    private void dispatch(Call call) {
        if (closed.get()) {
            call.fail(new ClosedChannelException());
            return;
        }
        Connection c = idle.pollLast();
        if (c != null) {
            c.send(call);
        } else if (connections < maxConnections) {
            open(call);
        } else {
            waiting.addLast(call);
        }
    }

    /** Opens a connection that will carry {@code first} (a probe with no frame just completes). */
    private void open(Call first) {
        connections++;
        peakConnections = Math.max(peakConnections, connections);
        Connection c = new Connection();
        ChannelFuture f = bootstrap.clone()
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new TcpFrameDecoder(), c);
                    }
                })
                .connect(server, NettyIo.anyPort());
        f.addListener((ChannelFuture done) -> {
            if (!done.isSuccess()) {
                connections--;
                first.fail(new IOException("tcp-pool cannot connect to " + server, done.cause()));
                return;
            }
            c.channel = done.channel();
            open.add(c);
            if (first.frame == null) {
                first.result.complete(null);
                release(c);
            } else {
                c.send(first);
            }
        });
    }

    /** A connection finished its call: it takes the next waiting call or goes back to the pool. */
    private void release(Connection c) {
        Call next = closed.get() ? null : waiting.pollFirst();
        if (next != null) {
            c.send(next);
        } else {
            idle.addLast(c);
        }
    }

    /** The most connections open at once so far. */
    public int peakConnections() {
        return peakConnections;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        List<Channel> channels = new ArrayList<>();
        try {
            loop.submit(() -> {
                for (Connection c : open) {
                    channels.add(c.channel);
                }
            }).awaitUninterruptibly();
        } catch (RejectedExecutionException ignored) {
            // the loop is gone already
        }
        for (Channel ch : channels) {
            ch.close().awaitUninterruptibly();
        }
        NettyIo.shutdown(group);
        // The loop has ended: nothing else touches the pool now.
        for (Call w; (w = waiting.pollFirst()) != null; ) {
            w.fail(new ClosedChannelException());
        }
        for (Connection c : open) {
            c.failCurrent(new ClosedChannelException());
        }
        open.clear();
        idle.clear();
    }

    /** One pooled connection and the call it carries. */
    private final class Connection extends ChannelInboundHandlerAdapter {
        Channel channel;
        Call current;

        void send(Call call) {
            if (!channel.isActive()) {
                call.fail(new ClosedChannelException());
                return;
            }
            current = call;
            ByteBuf frame = call.frame;
            channel.writeAndFlush(frame, channel.voidPromise());
        }

        void failCurrent(Throwable cause) {
            Call c = current;
            current = null;
            if (c != null) {
                c.result.completeExceptionally(cause); // its frame was handed to the channel
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf frame = (ByteBuf) msg;
            Call c = current;
            byte[] reply;
            try {
                if (c == null || TcpFrames.id(frame) != c.id) {
                    exceptionCaught(ctx, new IOException("tcp-pool: reply for no outstanding call"));
                    return;
                }
                reply = TcpFrames.payload(frame);
            } finally {
                frame.release();
            }
            current = null;
            release(this); // before completing, so that a call made by the completion finds it idle
            c.result.complete(reply);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (open.remove(this)) {
                connections--;
            }
            idle.remove(this);
            failCurrent(new ClosedChannelException());
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            failCurrent(new IOException("tcp-pool connection failed", cause));
            ctx.close();
        }
    }
}
