package io.homa.internal.tcp;

import io.homa.internal.Addresses;
import io.homa.internal.Failure;
import io.homa.internal.ShellConfig;
import io.homa.internal.observe.ShellCounter;
import io.homa.internal.rpc.Dispatcher;
import io.homa.internal.rpc.InboundRequest;
import io.homa.internal.rpc.RequestHandler;
import io.homa.internal.tls.TlsContext;
import io.homa.internal.transport.Transport;
import io.homa.core.ReceivedMessage;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.DecoderException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLSession;
import java.net.InetSocketAddress;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The serving side of the TCP fallback: a TCP listener on the Homa socket's port number whose
 * connections carry requests ({@link TcpFrames}) to the socket's handler, with the same message
 * size limit, request timeout, queue bound ({@code HomaConfig.maxQueuedRequests()}) and outcomes
 * as over Homa: a reply, or an error frame where a Homa client would fail (dropped, overloaded).
 * A retry of a Homa call runs only if no engine loop of the socket received that request over
 * Homa ({@link Host#claimForTcp}); the claim also keeps a late Homa copy from running.
 *
 * <p>On a mutual-TLS socket the connections arrive through the key exchange's listener, their
 * TLS handshake done ({@link #serveTls}), and carry the client's identity to the handler.
 *
 * <p>Threads: each connection's frames are read on its event loop (one of the socket's); replies
 * come from any thread and are written on that loop. Counters go to the socket's shared array.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class TcpServer implements io.homa.internal.transport.TcpListener {
    /** What the fallback's server asks of the socket that it serves. */
    public interface Host {
        /**
         * May the TCP retry of the Homa RPC {@code rpcId} of {@code client} (its UDP address) run?
         * True unless an engine loop received that request over Homa; completes on an event loop.
         */
        CompletableFuture<Boolean> claimForTcp(InetSocketAddress client, long rpcId);

        /** The application's handler, or null while none is set. */
        RequestHandler handler();

        /** Makes the request objects the handler sees. */
        InboundRequest.Factory requests();

        /** False once the socket is closing. */
        boolean isOpen();

        /** The verified identity that holds the Homa address {@code peer} (mutual TLS), else null. */
        String identityAt(InetSocketAddress peer);
    }

    private static final Logger log = LoggerFactory.getLogger(TcpServer.class);

    private final Host socket;
    private final ShellConfig config;
    private final Dispatcher dispatcher;
    private final AtomicLongArray counters;
    private final long requestTimeoutNanos;
    private final long oldestRetryNanos;
    /** The listener, once bound (closed by {@link #close(long)}). */
    private volatile Channel listener;
    /** The connections accepted and not yet closed (a group drops a channel once closed). */
    private final io.netty.channel.group.ChannelGroup accepted =
            new io.netty.channel.group.DefaultChannelGroup(io.netty.util.concurrent.GlobalEventExecutor.INSTANCE);
    private volatile boolean closed;

    public TcpServer(ShellConfig config, Host socket, Dispatcher dispatcher, AtomicLongArray counters) {
        this.socket = socket;
        this.config = config;
        this.dispatcher = dispatcher;
        this.counters = counters;
        this.requestTimeoutNanos = config.requestTimeout().toNanos();
        this.oldestRetryNanos = TcpFrames.oldestRetryNanos(config);
    }

    @Override
    public Channel bind(EventLoopGroup group, Transport transport, InetSocketAddress address) {
        ServerBootstrap b = new ServerBootstrap().group(group)
                .channelFactory(transport::newServerSocketChannel)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        accepted.add(ch);
                        if (closed) {
                            ch.close();
                            return;
                        }
                        ch.pipeline().addLast(TcpFrames.decoder(TcpFrames.REQUEST_HEADER, config.maxMessageLength()),
                                new Connection(null));
                    }
                });
        ChannelFuture f = b.bind(address).awaitUninterruptibly();
        if (!f.isSuccess()) {
            throw config.failures().create(Failure.IO_ERROR,
                    "cannot listen for TCP on " + address + " (TCP fallback): " + f.cause(), f.cause());
        }
        listener = f.channel();
        return f.channel();
    }

    /**
     * Closes the listener and every accepted connection (their requests' replies are dropped),
     * waiting for them until {@code giveUpNanos} before the socket's loops stop (see
     * {@link io.homa.internal.transport.ChannelClosing}).
     */
    public void close(long giveUpNanos) {
        closed = true;
        java.util.List<ChannelFuture> closing = new java.util.ArrayList<>();
        Channel l = listener;
        if (l != null) {
            closing.add(l.close());
        }
        for (Channel ch : accepted) {
            closing.add(ch.close());
        }
        io.homa.internal.transport.ChannelClosing.await(closing, giveUpNanos);
    }

    /**
     * Serves a connection a secured socket accepted and whose TLS handshake verified the client
     * (mutual TLS: the key exchange's listener hands over connections that name the fallback);
     * its requests carry the client's identity and TLS session. On the connection's event loop.
     */
    public void serveTls(Channel ch, SSLSession session) {
        ch.pipeline().addLast(TcpFrames.decoder(TcpFrames.REQUEST_HEADER, config.maxMessageLength()),
                new Connection(session));
    }

    private void count(ShellCounter c) {
        counters.incrementAndGet(c.ordinal());
    }

    /** One accepted connection: decodes requests and is the reply path of each. */
    private final class Connection extends SimpleChannelInboundHandler<ByteBuf> implements InboundRequest.Path {
        /** The verified client's TLS session (a secured socket's), else null. */
        private final SSLSession session;
        /** Its certificate's subject, else null. */
        private final String identity;
        private Channel channel;
        private InetSocketAddress peer;
        /**
         * The timers that drop its requests at the request timeout, by request; the channel's
         * loop only. Here, not in the request: a request over Homa has none, and every field of
         * one costs a busy server's every call.
         */
        private final Map<InboundRequest, ScheduledFuture<?>> expiries = new IdentityHashMap<>(4);

        Connection(SSLSession session) {
            this.session = session;
            this.identity = session == null ? null : TlsContext.identityOf(session);
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            // An accepted channel knows its remote address from the start; a TLS one is added later.
            channel = ctx.channel();
            peer = Addresses.normalise((InetSocketAddress) channel.remoteAddress());
        }

        @Override
        public SSLSession tlsSession() {
            return session;
        }

        @Override
        public int maxReplyLength() {
            return config.maxMessageLength();
        }

        /** One whole frame (released after this returns). */
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
            if (frame.readableBytes() < TcpFrames.REQUEST_HEADER || frame.readByte() != TcpFrames.REQUEST) {
                badInput("a malformed request frame");
                return;
            }
            long callId = frame.readLong();
            long homaRpcId = frame.readLong();
            int udpPort = frame.readUnsignedShort();
            long age = frame.readLong();
            byte[] request = new byte[frame.readableBytes()];
            frame.readBytes(request);
            // The client as Homa knows it: its IP and its Homa socket's UDP port, whichever path.
            InetSocketAddress homaPeer = new InetSocketAddress(peer.getAddress(), udpPort);
            String holder = session == null ? null : socket.identityAt(homaPeer);
            if (holder != null && !holder.equals(identity)) {
                // A verified client naming another's Homa address (same IP, its UDP port): it
                // must not claim that client's RPCs, nor be counted as it.
                count(ShellCounter.TLS_REFUSED);
                answer(TcpFrames.error(channel.alloc(), TcpFrames.DROPPED, callId, "the Homa address " + homaPeer
                        + " belongs to another identity"));
            } else if (homaRpcId == 0) {
                serve(callId, homaPeer, request);
            } else if (age < 0 || age > oldestRetryNanos) {
                answer(TcpFrames.error(channel.alloc(), TcpFrames.REFUSED, callId, "the Homa RPC is "
                        + TimeUnit.NANOSECONDS.toMillis(age) + " ms old: too old to rule out that it ran"));
            } else {
                socket.claimForTcp(homaPeer, homaRpcId).whenComplete((claimed, e) -> channel.eventLoop().execute(() -> {
                    if (Boolean.TRUE.equals(claimed)) {
                        serve(callId, homaPeer, request);
                    } else {
                        answer(TcpFrames.error(channel.alloc(), TcpFrames.REFUSED, callId,
                                "the server received this request over Homa already"));
                    }
                }));
            }
        }

        /** Hands a request to the handler, as the engine loop does for one received over Homa (on the channel's loop). */
        private void serve(long callId, InetSocketAddress client, byte[] request) {
            InboundRequest r = socket.requests().create(this, callId, client, ReceivedMessage.of(request));
            RequestHandler handler = socket.handler();
            if (handler == null) {
                r.markDropped();
                count(ShellCounter.REQUESTS_DROPPED);
                answer(TcpFrames.error(channel.alloc(), TcpFrames.DROPPED, callId, "no handler is set"));
                return;
            }
            long now = System.nanoTime();
            r.deadline = now + requestTimeoutNanos; // TCP frames carry no deadline: the server's own
            // At the timeout, as over Homa: refused if it still waits for a thread, else dropped.
            expiries.put(r, channel.eventLoop().schedule(r::deadlinePassed, requestTimeoutNanos, TimeUnit.NANOSECONDS));
            if (!dispatcher.submit(handler, r, now)) {
                cancelExpiry(r);
                r.markDropped();
                count(ShellCounter.REQUESTS_OVERLOADED);
                answer(TcpFrames.error(channel.alloc(), TcpFrames.OVERLOADED, callId,
                        "more than maxQueuedRequests requests wait for the handler"));
                return;
            }
            count(ShellCounter.TCP_REQUESTS);
            count(ShellCounter.REQUESTS_HANDLED);
        }

        @Override
        public void expireRequest(InboundRequest r) {
            if (r.markDropped()) {
                count(ShellCounter.REQUESTS_EXPIRED);
                onLoop(Unpooled.EMPTY_BUFFER, () -> {
                    cancelExpiry(r);
                    // Refused unrun, as over Homa: a caller that still waits learns it did not run.
                    answer(TcpFrames.error(channel.alloc(), TcpFrames.OVERLOADED, r.rpcId,
                            "its deadline passed before a handler thread was free"));
                });
            }
        }

        @Override
        public void skippedRequest(InboundRequest r) {
            count(ShellCounter.REQUESTS_SKIPPED);
        }

        @Override
        public void shedRequest(InboundRequest r, long waitedNanos) {
            if (r.markDropped()) {
                count(ShellCounter.REQUESTS_SHED);
                onLoop(Unpooled.EMPTY_BUFFER, () -> {
                    cancelExpiry(r);
                    answer(TcpFrames.error(channel.alloc(), TcpFrames.OVERLOADED, r.rpcId, "overloaded: after "
                            + waitedNanos / 1_000_000 + " ms waiting, the handlers could not start it in time"));
                });
            }
        }

        @Override
        public void reply(InboundRequest r, byte[] bytes, ByteBuf owner) {
            ByteBuf body = owner != null ? owner : Unpooled.wrappedBuffer(bytes);
            count(ShellCounter.REQUESTS_REPLIED);
            onLoop(body, () -> {
                cancelExpiry(r);
                answer(Unpooled.wrappedBuffer(TcpFrames.responseHeader(channel.alloc(), TcpFrames.OK, r.rpcId,
                        body.readableBytes()), body));
            });
        }

        @Override
        public void dropRequest(InboundRequest r, String why) {
            if (r.markDropped()) {
                count(ShellCounter.REQUESTS_DROPPED);
                log.debug("{} over TCP dropped: {}", r, why);
                onLoop(Unpooled.EMPTY_BUFFER, () -> {
                    cancelExpiry(r);
                    answer(TcpFrames.error(channel.alloc(), TcpFrames.DROPPED, r.rpcId, why));
                });
            }
        }

        /** Runs {@code task} on the connection's loop; if that has ended (socket closed), releases {@code held}. */
        private void onLoop(ByteBuf held, Runnable task) {
            try {
                channel.eventLoop().execute(task);
            } catch (RejectedExecutionException e) {
                held.release();
            }
        }

        @Override
        public boolean isClosed() {
            return !channel.isActive() || !socket.isOpen();
        }

        private void cancelExpiry(InboundRequest r) {
            ScheduledFuture<?> expiry = expiries.remove(r);
            if (expiry != null) {
                expiry.cancel(false);
            }
        }

        /** Writes a whole frame (released by Netty, also when the connection is gone). */
        private void answer(ByteBuf frame) {
            channel.writeAndFlush(frame, channel.voidPromise());
        }

        private void badInput(String what) {
            count(ShellCounter.TCP_BAD_FRAMES);
            log.debug("TCP connection from {} closed: {}", peer, what);
            channel.close();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            // A frame over the size limit, a reset connection: the connection ends, the socket goes on.
            if (cause instanceof DecoderException) {
                badInput(cause.toString());
            } else {
                count(ShellCounter.IO_ERRORS);
                log.debug("TCP connection from {} failed", peer, cause);
                channel.close();
            }
        }
    }
}
