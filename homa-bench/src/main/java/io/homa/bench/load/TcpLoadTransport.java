package io.homa.bench.load;

import io.homa.bench.NettyIo;
import io.homa.bench.TcpFrameDecoder;
import io.homa.bench.TcpFrames;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.GlobalEventExecutor;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * TCP for the load generator, on the same Netty runtime as the other baselines (epoll, TCP_NODELAY)
 * and the same framing ({@link TcpFrames}: length, rpc id, payload). The server answers each
 * request with as many bytes as its first 4 bytes ask for. The client keeps a pool of
 * {@code connections} connections to each server, opened lazily, and sends each call on the one
 * with the fewest bytes outstanding (requests plus expected responses), so a short call is not
 * queued behind a long one on the same connection unless every connection is busy; replies may
 * come back in any order.
 */
public final class TcpLoadTransport implements LoadTransport {
    private final EventLoopGroup group;
    private final Channel serverChannel;
    /**
     * The accepted connections still open (a channel leaves the group when it closes); once the
     * group is closed, one accepted at that moment (on another of the group's loops) is closed as
     * it is added.
     */
    private final ChannelGroup accepted =
            new DefaultChannelGroup("load-tcp-accepted", GlobalEventExecutor.INSTANCE, true);
    private final int connections;
    private final AtomicLong ids = new AtomicLong();
    private final Map<InetSocketAddress, Conn[]> pools = new ConcurrentHashMap<>();
    private final List<Channel> clientChannels = new ArrayList<>();

    public TcpLoadTransport(InetSocketAddress bind, boolean serve, int threads, int connections) {
        this.group = NettyIo.newGroup(threads, "load-tcp");
        this.connections = connections;
        Channel sc = null;
        if (serve) {
            try {
                sc = new ServerBootstrap().group(group).channel(NettyIo.serverSocketChannel())
                        .option(ChannelOption.SO_REUSEADDR, true)
                        .option(ChannelOption.SO_BACKLOG, 1024)
                        .childOption(ChannelOption.TCP_NODELAY, true)
                        .childHandler(new ChannelInitializer<SocketChannel>() {
                            @Override
                            protected void initChannel(SocketChannel ch) {
                                accepted.add(ch);
                                ch.pipeline().addLast(new TcpFrameDecoder(), new ServerHandler());
                            }
                        }).bind(bind).sync().channel();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                NettyIo.shutdown(group);
                throw new IllegalStateException("interrupted while binding " + bind, e);
            } catch (RuntimeException e) {
                NettyIo.shutdown(group);
                throw e;
            }
        }
        serverChannel = sc;
    }

    /** Answers a frame with {@code want} zero bytes under the same rpc id. */
    private static final class ServerHandler extends SimpleChannelInboundHandler<ByteBuf> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
            long id = TcpFrames.id(frame);
            int want = TcpFrames.payloadLength(frame) >= 4 ? frame.getInt(frame.readerIndex() + TcpFrames.HEADER) : 100;
            want = Math.max(0, Math.min(want, TcpFrames.MAX_PAYLOAD));
            ByteBuf out = ctx.alloc().directBuffer(TcpFrames.HEADER + want);
            out.writeInt(TcpFrames.ID_FIELD + want);
            out.writeLong(id);
            out.writeZero(want);
            ctx.writeAndFlush(out, ctx.voidPromise());
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    private static final class Pending {
        final CompletableFuture<Integer> future = new CompletableFuture<>();
        final long bytes;

        Pending(long bytes) {
            this.bytes = bytes;
        }
    }

    /** One client connection and its outstanding calls. */
    private final class Conn extends SimpleChannelInboundHandler<ByteBuf> {
        final Map<Long, Pending> pending = new ConcurrentHashMap<>();
        final AtomicLong outstanding = new AtomicLong();
        volatile Channel channel;
        /** The latest write on this connection (its event loop only). */
        ChannelFuture lastWrite;

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
            Pending p = pending.remove(TcpFrames.id(frame));
            if (p != null) {
                outstanding.addAndGet(-p.bytes);
                p.future.complete(TcpFrames.payloadLength(frame));
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            failAll(new IllegalStateException("connection closed"));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            failAll(cause);
            ctx.close();
        }

        void fail(long id, Throwable t) {
            Pending gone = pending.remove(id);
            if (gone != null) {
                outstanding.addAndGet(-gone.bytes);
                gone.future.completeExceptionally(t);
            }
        }

        void failAll(Throwable t) {
            for (Long id : pending.keySet()) {
                fail(id, t);
            }
        }
    }

    private Conn[] pool(InetSocketAddress server) {
        return pools.computeIfAbsent(server, s -> {
            Conn[] conns = new Conn[connections];
            List<Channel> opened = new ArrayList<>();
            try {
            for (int i = 0; i < connections; i++) {
                Conn c = new Conn();
                try {
                    Channel ch = new Bootstrap().group(group).channel(NettyIo.socketChannel())
                            .option(ChannelOption.TCP_NODELAY, true)
                            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 5000)
                            .handler(new ChannelInitializer<SocketChannel>() {
                                @Override
                                protected void initChannel(SocketChannel ch) {
                                    ch.pipeline().addLast(new TcpFrameDecoder(), c);
                                }
                            }).connect(s).sync().channel();
                    c.channel = ch;
                    opened.add(ch);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while connecting to " + s, e);
                }
                conns[i] = c;
            }
            } catch (Exception e) { // ConnectException arrives unchecked from sync()
                opened.forEach(Channel::close);
                throw e instanceof RuntimeException r ? r : new IllegalStateException("cannot connect to " + s + ": " + e, e);
            }
            synchronized (clientChannels) {
                clientChannels.addAll(opened);
            }
            return conns;
        });
    }

    /** Opens the connections to {@code server} now (so that connecting is not measured). */
    public void connect(InetSocketAddress server) {
        pool(server);
    }

    @Override
    public CompletableFuture<Integer> call(InetSocketAddress server, int length, int responseLength) {
        return call(server, length, responseLength, SendObserver.NONE);
    }

    /**
     * Sends on the least-loaded connection. The write is handed to the connection's event loop
     * explicitly (as {@code writeAndFlush} from another thread would) so that {@code observer}
     * learns when the loop took it up and when the kernel could start taking its bytes: at once,
     * or when the earlier writes on that connection were all in the kernel (a connection writes
     * in order). The time between is the wait behind a full socket send buffer.
     */
    @Override
    public CompletableFuture<Integer> call(InetSocketAddress server, int length, int responseLength, SendObserver observer) {
        Conn[] conns;
        try {
            conns = pool(server);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        Conn best = conns[0];
        long least = Long.MAX_VALUE;
        for (Conn c : conns) {
            long o = c.outstanding.get();
            if (o < least) {
                least = o;
                best = c;
            }
        }
        long id = ids.incrementAndGet();
        int len = Math.max(SizeDistribution.MIN_REQUEST, length);
        Pending p = new Pending((long) len + responseLength);
        best.pending.put(id, p);
        best.outstanding.addAndGet(p.bytes);
        Channel ch = best.channel;
        Conn owner = best;
        NettyIo.onLoop(ch.eventLoop(), () -> {
            long ioStart = System.nanoTime();
            ByteBuf frame = ch.alloc().directBuffer(TcpFrames.HEADER + len);
            frame.writeInt(TcpFrames.ID_FIELD + len);
            frame.writeLong(id);
            frame.writeInt(responseLength);
            frame.writeZero(len - 4);
            ChannelFuture ahead = owner.lastWrite;
            ChannelFuture written = ch.writeAndFlush(frame);
            owner.lastWrite = written;
            if (ahead == null || ahead.isDone()) {
                observer.sent(ioStart, ioStart);
            } else {
                ahead.addListener(f -> observer.sent(ioStart, System.nanoTime()));
            }
            written.addListener(f -> {
                if (!f.isSuccess()) {
                    owner.fail(id, f.cause());
                }
            });
        }, () -> owner.fail(id, new IllegalStateException("transport closed")));
        return p.future;
    }

    @Override
    public void close() {
        if (serverChannel != null) {
            serverChannel.close().awaitUninterruptibly(2000);
            accepted.close().awaitUninterruptibly(2000);
        }
        synchronized (clientChannels) {
            for (Channel ch : clientChannels) {
                ch.close();
            }
        }
        NettyIo.shutdown(group);
    }
}
