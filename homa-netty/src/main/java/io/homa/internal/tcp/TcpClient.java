package io.homa.internal.tcp;

import io.homa.internal.Failure;
import io.homa.internal.ShellConfig;
import io.homa.internal.observe.ShellCounter;
import io.homa.internal.tls.TlsContext;
import io.homa.internal.rpc.ClientCall;
import io.homa.internal.transport.Transport;
import io.homa.core.ReceivedMessage;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.ssl.SslHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The calling side of the TCP fallback: sends requests to peers over TCP ({@link TcpFrames}) and
 * returns their answers. Each peer has a small pool of at most
 * {@code HomaConfig.tcpConnectionsPerPeer()} connections, opened on demand; a call takes the one
 * with the fewest calls outstanding, and a new one is opened while every open one is busy and the
 * pool has room. A connection with nothing outstanding for {@code HomaConfig.tcpIdleTimeout()}
 * closes. On a mutual-TLS socket every connection is TLS 1.3 with both certificates verified
 * (ALPN {@link TlsContext#FALLBACK}) before a call is written to it: no call goes in plaintext.
 * Any thread; connections live on the socket's event loops.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class TcpClient {
    private static final Logger log = LoggerFactory.getLogger(TcpClient.class);

    private final ShellConfig config;
    private final Transport transport;
    private final EventLoopGroup group;
    private final AtomicLongArray counters;
    private final int localUdpPort;
    /**
     * The Homa socket's own address with port 0, or null when it is bound to the wildcard: a
     * connection leaves from the same IP as the socket's datagrams, so that the server can match
     * a retry to the Homa RPC it names (client IP and UDP port).
     */
    private final InetSocketAddress localIp;
    /** A mutual-TLS socket's TLS: every connection is verified both ways before a call is sent; else null. */
    private final TlsContext tls;
    private final Map<InetSocketAddress, List<Connection>> pools = new ConcurrentHashMap<>();
    private final AtomicLong nextCallId = new AtomicLong();
    private volatile boolean closed;

    /** @param tls a mutual-TLS socket's TLS (its calls then run over TLS only), or null */
    public TcpClient(ShellConfig config, Transport transport, EventLoopGroup group, AtomicLongArray counters,
              InetSocketAddress local, TlsContext tls) {
        this.config = config;
        this.tls = tls;
        this.transport = transport;
        this.group = group;
        this.counters = counters;
        this.localUdpPort = local.getPort();
        this.localIp = local.getAddress().isAnyLocalAddress() ? null : new InetSocketAddress(local.getAddress(), 0);
    }

    /**
     * Sends a request to {@code peer} over TCP; the future completes (on an event loop) with the
     * server's answer, or exceptionally with an {@link IOException} when the connection cannot be
     * made (on a mutual-TLS socket: also when its TLS handshake fails) or breaks first. {@code body}'s readable bytes are the request; one reference to it
     * passes to this method in every case.
     *
     * @param homaRpcId the Homa RPC this retries, or 0 for a call sent over TCP directly
     * @param ageNanos  how long ago that Homa RPC started (0 for a direct call)
     */
    public CompletableFuture<TcpFrames.Reply> send(InetSocketAddress peer, long homaRpcId, long ageNanos, ByteBuf body) {
        counters.incrementAndGet(ShellCounter.TCP_CALLS.ordinal());
        CompletableFuture<TcpFrames.Reply> reply = new CompletableFuture<>();
        if (closed) {
            body.release();
            reply.completeExceptionally(new ClosedChannelException());
            return reply;
        }
        Connection c = pick(peer);
        long callId = nextCallId.incrementAndGet();
        c.pending.put(callId, reply);
        reply.whenComplete((r, e) -> c.pending.remove(callId));
        c.connected.addListener(f -> {
            if (!f.isSuccess()) {
                body.release();
                reply.completeExceptionally(new IOException("cannot connect to " + peer + " over TCP: " + f.cause(),
                        f.cause()));
                return;
            }
            Channel ch = c.connected.channel();
            ByteBuf header = TcpFrames.requestHeader(ch.alloc(), callId, homaRpcId, localUdpPort, ageNanos,
                    body.readableBytes());
            ch.writeAndFlush(Unpooled.wrappedBuffer(header, body)).addListener(w -> {
                if (!w.isSuccess()) {
                    reply.completeExceptionally(new IOException("TCP send to " + peer + " failed: " + w.cause(),
                            w.cause()));
                }
            });
        });
        return reply;
    }

    /**
     * What a TCP answer means for call {@code c}: null for a response, else the exception the call
     * fails with, the same as over Homa for the same outcome. Not for {@link TcpFrames#REFUSED}.
     */
    public RuntimeException failure(ClientCall<?> c, TcpFrames.Reply reply) {
        Failure.Factory f = config.failures();
        return switch (reply.status()) {
            case TcpFrames.OK -> null;
            case TcpFrames.OVERLOADED -> f.create(Failure.OVERLOADED, c + " refused by the server over TCP: "
                    + reply.reason() + "; it did not run this one (retry later)");
            case TcpFrames.DROPPED -> f.create(Failure.UNKNOWN_RPC, c + ": the server dropped the request it got"
                    + " over TCP (" + reply.reason() + ")");
            default -> f.create(Failure.IO_ERROR, c + ": the server answered over TCP with"
                    + " status " + reply.status() + " (" + reply.reason() + ")");
        };
    }

    /** Completes {@code c} with {@code reply} or {@code failure} (see {@link #failure}); on the user-code executor. */
    public static void complete(ClientCall<?> c, TcpFrames.Reply reply, RuntimeException failure) {
        if (failure == null) {
            c.succeed(ReceivedMessage.of(reply.body()));
        } else {
            c.fail(failure);
        }
    }

    /** The least busy connection to {@code peer}, or a new one while all are busy and the pool has room. */
    private Connection pick(InetSocketAddress peer) {
        List<Connection> pool = pools.computeIfAbsent(peer, p -> new ArrayList<>());
        synchronized (pool) {
            pool.removeIf(c -> c.connected.isDone() && !c.connected.channel().isActive());
            Connection best = null;
            for (Connection c : pool) {
                if (best == null || c.pending.size() < best.pending.size()) {
                    best = c;
                }
            }
            if (best == null || (!best.pending.isEmpty() && pool.size() < config.tcpConnectionsPerPeer())) {
                best = new Connection(peer, pool);
                pool.add(best);
                if (closed) { // close() swept the pools before this one joined: it goes too (its calls fail)
                    best.connected.channel().close();
                }
            }
            best.lastUsed = System.nanoTime();
            return best;
        }
    }

    /**
     * Closes every connection (their outstanding calls fail), waiting for them until
     * {@code giveUpNanos} (see {@link io.homa.internal.transport.ChannelClosing}); later sends fail
     * at once.
     */
    public void close(long giveUpNanos) {
        closed = true;
        List<ChannelFuture> closing = new ArrayList<>();
        for (List<Connection> pool : pools.values()) {
            synchronized (pool) {
                for (Connection c : pool) {
                    closing.add(c.connected.channel().close());
                }
            }
        }
        io.homa.internal.transport.ChannelClosing.await(closing, giveUpNanos);
    }

    /** One connection to a peer and the calls waiting for an answer on it. */
    private final class Connection extends SimpleChannelInboundHandler<ByteBuf> {
        final Map<Long, CompletableFuture<TcpFrames.Reply>> pending = new ConcurrentHashMap<>();
        /** Done when calls can be sent: connected, and over TLS also verified both ways. */
        final ChannelFuture connected;
        volatile long lastUsed = System.nanoTime();
        private final InetSocketAddress peer;
        private final List<Connection> pool;

        Connection(InetSocketAddress peer, List<Connection> pool) {
            this.peer = peer;
            this.pool = pool;
            counters.incrementAndGet(ShellCounter.TCP_CONNECTIONS_OPENED.ordinal());
            SslHandler ssl = tls == null ? null : tls.client(peer, TlsContext.FALLBACK);
            Bootstrap b = new Bootstrap().group(group).channelFactory(transport::newSocketChannel)
                    .option(ChannelOption.TCP_NODELAY, true)
                    .handler(new ChannelInitializer<Channel>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            if (ssl != null) {
                                ch.pipeline().addLast(ssl);
                            }
                            ch.pipeline().addLast(TcpFrames.decoder(TcpFrames.RESPONSE_HEADER, config.maxMessageLength()),
                                    Connection.this);
                        }
                    });
            ChannelFuture connecting = localIp == null ? b.connect(peer) : b.connect(peer, localIp);
            connected = ssl == null ? connecting : verified(connecting, ssl);
            connected.channel().closeFuture().addListener(f -> closed());
            connected.addListener(f -> {
                if (f.isSuccess()) {
                    scheduleIdleCheck();
                }
            });
        }

        /** Done when the TLS handshake on {@code connecting} verified the server (and counted). */
        private ChannelFuture verified(ChannelFuture connecting, SslHandler ssl) {
            ChannelPromise done = connecting.channel().newPromise();
            connecting.addListener(f -> {
                if (!f.isSuccess()) {
                    done.tryFailure(f.cause());
                }
            });
            ssl.handshakeFuture().addListener(h -> {
                if (h.isSuccess() && TlsContext.FALLBACK.equals(TlsContext.protocolOf(ssl))) {
                    counters.incrementAndGet(ShellCounter.TLS_HANDSHAKES.ordinal());
                    done.trySuccess();
                } else {
                    if (connecting.isSuccess()) { // a failed connect is no TLS refusal
                        counters.incrementAndGet(ShellCounter.TLS_REFUSED.ordinal());
                    }
                    done.tryFailure(h.isSuccess() ? new IOException("the server agreed to no TCP fallback over TLS")
                            : new IOException("the TLS handshake failed: " + h.cause().getMessage(), h.cause()));
                    connecting.channel().close();
                }
            });
            return done;
        }

        private void scheduleIdleCheck() {
            long idle = config.tcpIdleTimeout().toNanos();
            Channel ch = connected.channel();
            ch.eventLoop().schedule(() -> {
                if (!ch.isActive()) {
                    return;
                }
                if (pending.isEmpty() && System.nanoTime() - lastUsed >= idle) {
                    log.debug("idle TCP connection to {} closed", peer);
                    ch.close();
                } else {
                    scheduleIdleCheck();
                }
            }, Math.max(1, idle / 2), TimeUnit.NANOSECONDS);
        }

        /** Out of the pool; every call still waiting on it fails. */
        private void closed() {
            synchronized (pool) {
                pool.remove(this);
            }
            IOException gone = new IOException("the TCP connection to " + peer + " closed");
            for (CompletableFuture<TcpFrames.Reply> f : pending.values()) {
                f.completeExceptionally(gone);
            }
        }

        /** One whole frame (released after this returns). */
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
            if (frame.readableBytes() < TcpFrames.RESPONSE_HEADER) {
                log.debug("malformed TCP response from {}; connection closed", peer);
                ctx.close();
                return;
            }
            byte status = frame.readByte();
            long callId = frame.readLong();
            byte[] body = new byte[frame.readableBytes()];
            frame.readBytes(body);
            lastUsed = System.nanoTime();
            CompletableFuture<TcpFrames.Reply> f = pending.remove(callId);
            if (f != null) {
                f.complete(new TcpFrames.Reply(status, body));
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            counters.incrementAndGet(ShellCounter.IO_ERRORS.ordinal());
            log.debug("TCP connection to {} failed", peer, cause);
            ctx.close();
        }
    }
}
