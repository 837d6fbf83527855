package io.homa.collective.internal;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.ScheduledFuture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Segments over TCP, for comparison with {@link HomaLink}: the same messages and acknowledgements,
 * each a frame {@code [u32 length][u8 type][i64 id][body]} (type DATA with the message, OK, or
 * REFUSED with the reason). This rank listens at its address and connects to a peer the first time
 * it sends to it, retrying every 20 ms while the peer is not listening yet. Netty's epoll transport
 * when it loads (as homa-netty uses), NIO otherwise; two event loops per rank, on which messages are
 * delivered (and reductions run).
 */
public final class TcpLink implements Link {
    static final byte DATA = 0;
    static final byte OK = 1;
    static final byte REFUSED = 2;
    private static final int PREFIX = 4 + 1 + 8;
    /** A frame may carry the largest segment (CollectiveOptions caps it at 64 MiB) and its header: a longer length closes the connection. */
    static final int MAX_FRAME = (64 << 20) + 1024;
    private static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private final InetSocketAddress[] members;
    private final int rank;
    private final EventLoopGroup loops;
    private final Channel server;
    private final Connection[] connections;
    private final AtomicLong ids = new AtomicLong();
    private volatile Inbound inbound;
    private volatile boolean closed;

    public TcpLink(List<InetSocketAddress> members, int rank) {
        this.members = members.toArray(new InetSocketAddress[0]);
        this.rank = rank;
        boolean epoll = Epoll.isAvailable();
        loops = new MultiThreadIoEventLoopGroup(2, new DefaultThreadFactory("homa-collective-tcp-" + rank, true),
                epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
        connections = new Connection[this.members.length];
        for (int i = 0; i < connections.length; i++) {
            connections[i] = new Connection(i);
        }
        Class<? extends ServerChannel> serverType = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        ChannelFuture bound = new ServerBootstrap().group(loops).channel(serverType)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new LengthFieldBasedFrameDecoder(MAX_FRAME, 0, 4, 0, 4),
                                new Receiver());
                    }
                }).bind(this.members[rank]).awaitUninterruptibly();
        if (!bound.isSuccess()) {
            loops.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            throw new UncheckedIOException(new IOException("cannot listen on " + this.members[rank] + ": "
                    + bound.cause(), bound.cause()));
        }
        server = bound.channel();
    }

    private Class<? extends Channel> clientType() {
        return Epoll.isAvailable() ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    @Override
    public void start(Inbound inbound) {
        this.inbound = inbound;
    }

    @Override
    public void send(int peer, ByteBuf message, long timeoutNanos, SendCallback callback) {
        if (closed) {
            message.release();
            callback.done(new IllegalStateException("the group is closed"), null);
            return;
        }
        connections[peer].send(message, timeoutNanos, callback);
    }

    @Override
    public Timer schedule(long delayNanos, Runnable task) {
        ScheduledFuture<?> f = loops.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
        return () -> f.cancel(false);
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public ByteBufAllocator alloc() {
        return PooledByteBufAllocator.DEFAULT;
    }

    @Override
    public void close() {
        closed = true;
        // Called from one of our loops (a future's callback), waiting would block or deadlock it.
        boolean await = true;
        for (io.netty.util.concurrent.EventExecutor e : loops) {
            if (e.inEventLoop()) {
                await = false;
            }
        }
        ChannelFuture f = server.close();
        if (await) {
            f.awaitUninterruptibly();
        }
        for (Connection c : connections) {
            c.close(await);
        }
        io.netty.util.concurrent.Future<?> down = loops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        if (await) {
            down.awaitUninterruptibly();
        }
    }

    private static void cancel(Pending p) {
        ScheduledFuture<?> t = p.timeout;
        if (t != null) {
            t.cancel(false);
        }
    }

    @Override
    public String toString() {
        return "TCP " + members[rank];
    }

    private static ByteBuf frame(ByteBufAllocator alloc, byte type, long id, int bodyLength) {
        ByteBuf b = alloc.buffer(PREFIX);
        b.writeInt(1 + 8 + bodyLength).writeByte(type).writeLong(id);
        return b;
    }

    /** The connection this rank opened to one peer: its sends and their acknowledgements. */
    private final class Connection {
        private final int peer;
        private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
        private Channel channel;
        private boolean connecting;
        private final java.util.ArrayDeque<Runnable> waiting = new java.util.ArrayDeque<>();

        Connection(int peer) {
            this.peer = peer;
        }

        void send(ByteBuf message, long timeoutNanos, SendCallback callback) {
            long id = ids.incrementAndGet();
            Pending p = new Pending(callback);
            pending.put(id, p);
            p.timeout = loops.schedule(() -> {
                if (pending.remove(id) != null) {
                    callback.done(new java.util.concurrent.TimeoutException("no answer from rank " + peer + " at "
                            + members[peer] + " in " + timeoutNanos / 1_000_000 + " ms"), null);
                }
            }, timeoutNanos, TimeUnit.NANOSECONDS);
            Runnable write = () -> {
                Channel ch;
                synchronized (this) {
                    ch = channel;
                }
                if (ch == null) {
                    message.release();
                    return; // connecting failed for good: the timeout answers
                }
                ByteBuf head = frame(ch.alloc(), DATA, id, message.readableBytes());
                // One write: writes from several threads interleave, a header and its body must not.
                ch.writeAndFlush(ch.alloc().compositeBuffer(2).addComponents(true, head, message));
            };
            boolean now;
            synchronized (this) {
                now = channel != null && channel.isActive();
                if (!now) {
                    waiting.add(write);
                    if (!connecting) {
                        connecting = true;
                        connect(System.nanoTime() + timeoutNanos);
                    }
                }
            }
            if (now) {
                write.run();
            }
        }

        private void connect(long giveUpAt) {
            new Bootstrap().group(loops).channel(clientType()).option(ChannelOption.TCP_NODELAY, true)
                    .handler(new ChannelInitializer<Channel>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            ch.pipeline().addLast(new LengthFieldBasedFrameDecoder(MAX_FRAME, 0, 4, 0, 4),
                                    new Answers(Connection.this));
                        }
                    }).connect(members[peer]).addListener((ChannelFuture f) -> {
                        if (f.isSuccess() && closed) {
                            f.channel().close();
                            dropWaiting();
                        } else if (f.isSuccess()) {
                            java.util.List<Runnable> ready;
                            synchronized (this) {
                                channel = f.channel();
                                connecting = false;
                                ready = new java.util.ArrayList<>(waiting);
                                waiting.clear();
                            }
                            Channel ch = f.channel();
                            ch.closeFuture().addListener(c -> lost(ch));
                            ready.forEach(Runnable::run);
                        } else if (!closed && System.nanoTime() + RETRY_NANOS < giveUpAt) {
                            loops.schedule(() -> connect(giveUpAt), RETRY_NANOS, TimeUnit.NANOSECONDS);
                        } else {
                            dropWaiting();
                            failAll(f.cause());
                        }
                    });
        }

        /** Gives back the messages still waiting for a connection (each write releases its message when there is no channel). */
        private void dropWaiting() {
            java.util.List<Runnable> dropped;
            synchronized (this) {
                connecting = false;
                dropped = new java.util.ArrayList<>(waiting);
                waiting.clear();
            }
            dropped.forEach(Runnable::run);
        }

        void answered(long id, byte type, String reason) {
            Pending p = pending.remove(id);
            if (p != null) {
                cancel(p);
                p.callback.done(null, type == OK ? null : reason.isEmpty() ? "F(no reason)" : reason);
            }
        }

        private void lost(Channel closed) {
            synchronized (this) {
                if (channel == closed) {
                    channel = null;
                }
            }
            failAll(new IOException("the connection to rank " + peer + " at " + members[peer] + " closed"));
        }

        private void failAll(Throwable cause) {
            for (Long id : pending.keySet()) {
                Pending p = pending.remove(id);
                if (p != null) {
                    cancel(p);
                    p.callback.done(cause == null ? new IOException("cannot connect to rank " + peer) : cause, null);
                }
            }
        }

        void close(boolean await) {
            Channel ch;
            synchronized (this) {
                ch = channel;
                channel = null;
            }
            if (ch != null) {
                io.netty.channel.ChannelFuture f = ch.close();
                if (await) {
                    f.awaitUninterruptibly();
                }
            }
            dropWaiting();
            failAll(new IllegalStateException("the group is closed"));
        }
    }

    private static final class Pending {
        final SendCallback callback;
        /** Set just after the entry is published: readers on other threads may still see null. */
        volatile ScheduledFuture<?> timeout;

        Pending(SendCallback callback) {
            this.callback = callback;
        }
    }

    /** Reads the peer's answers on a connection this rank opened. */
    private static final class Answers extends SimpleChannelInboundHandler<ByteBuf> {
        private final Connection connection;

        Answers(Connection connection) {
            this.connection = connection;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
            if (frame.readableBytes() < 9) {
                ctx.close(); // not our protocol
                return;
            }
            byte type = frame.readByte();
            long id = frame.readLong();
            connection.answered(id, type, frame.toString(StandardCharsets.UTF_8));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /** Reads segments on a connection a peer opened, and answers each. */
    private final class Receiver extends SimpleChannelInboundHandler<ByteBuf> {
        Receiver() {
            super(false); // the message goes on to the group, which releases it
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
            if (frame.readableBytes() < 9 || frame.getByte(frame.readerIndex()) != DATA) {
                frame.release();
                ctx.close(); // not our protocol
                return;
            }
            frame.skipBytes(1);
            long id = frame.readLong();
            Channel ch = ctx.channel();
            Inbound in = inbound;
            if (in == null) {
                frame.release();
                answer(ch, REFUSED, id, "F" + "rank " + rank + " is not started");
                return;
            }
            in.deliver(frame, new Reply() {
                @Override
                public void ok() {
                    answer(ch, OK, id, "");
                }

                @Override
                public void refuse(String reason) {
                    answer(ch, REFUSED, id, reason);
                }
            });
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    private static void answer(Channel ch, byte type, long id, String reason) {
        byte[] body = reason.getBytes(StandardCharsets.UTF_8);
        ByteBuf b = frame(ch.alloc(), type, id, body.length);
        b.writeBytes(body);
        ch.writeAndFlush(b);
    }
}
