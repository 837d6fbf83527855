package io.homa;

import io.homa.HomaMetrics.Shell;
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

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The serving side of the TCP fallback: a TCP listener on the Homa socket's port number whose
 * connections carry requests ({@link TcpFrames}) to the socket's handler, with the same message
 * size limit, request timeout, queue bound ({@link HomaConfig#maxQueuedRequests()}) and outcomes
 * as over Homa: a reply, or an error frame where a Homa client would fail (dropped, overloaded).
 * A retry of a Homa call runs only if no engine loop of the socket received that request over
 * Homa ({@link NettyHomaSocket#claimForTcp}); the claim also keeps a late Homa copy from running.
 *
 * <p>Threads: each connection's frames are read on its event loop (one of the socket's); replies
 * come from any thread and are written on that loop. Counters go to the socket's shared array.
 */
final class TcpServer {
    private static final Logger log = LoggerFactory.getLogger(TcpServer.class);

    private final NettyHomaSocket socket;
    private final HomaConfig config;
    private final Dispatcher dispatcher;
    private final AtomicLongArray counters;
    private final long requestTimeoutNanos;
    private final long oldestRetryNanos;

    TcpServer(NettyHomaSocket socket, Dispatcher dispatcher, AtomicLongArray counters) {
        this.socket = socket;
        this.config = socket.config();
        this.dispatcher = dispatcher;
        this.counters = counters;
        this.requestTimeoutNanos = config.requestTimeout().toNanos();
        this.oldestRetryNanos = TcpFrames.oldestRetryNanos(config);
    }

    /**
     * Listens on {@code address} (port 0: any free port).
     *
     * @throws HomaException of kind IO_ERROR if the port cannot be bound
     */
    Channel bind(EventLoopGroup group, Transport transport, InetSocketAddress address) {
        ServerBootstrap b = new ServerBootstrap().group(group)
                .channelFactory(transport::newServerSocketChannel)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(TcpFrames.decoder(TcpFrames.REQUEST_HEADER, config.maxMessageLength()),
                                new Connection());
                    }
                });
        ChannelFuture f = b.bind(address).awaitUninterruptibly();
        if (!f.isSuccess()) {
            throw new HomaException(HomaException.Kind.IO_ERROR,
                    "cannot listen for TCP on " + address + " (TCP fallback): " + f.cause(), f.cause());
        }
        return f.channel();
    }

    private void count(Shell c) {
        counters.incrementAndGet(c.ordinal());
    }

    /** One accepted connection: decodes requests and is the reply path of each. */
    private final class Connection extends SimpleChannelInboundHandler<ByteBuf> implements ServerRequest.Path {
        private Channel channel;
        private InetSocketAddress peer;

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            channel = ctx.channel();
            peer = Addresses.normalise((InetSocketAddress) channel.remoteAddress());
            ctx.fireChannelActive();
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
            if (homaRpcId == 0) {
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
            ServerRequest r = new ServerRequest(this, callId, client, ReceivedMessage.of(request), config.maxMessageLength());
            HomaHandler handler = socket.handler();
            if (handler == null) {
                r.markDropped();
                count(Shell.REQUESTS_DROPPED);
                answer(TcpFrames.error(channel.alloc(), TcpFrames.DROPPED, callId, "no handler is set"));
                return;
            }
            if (!dispatcher.admitRequest()) {
                r.markDropped();
                count(Shell.REQUESTS_OVERLOADED);
                answer(TcpFrames.error(channel.alloc(), TcpFrames.OVERLOADED, callId,
                        "more than maxQueuedRequests requests wait for the handler"));
                return;
            }
            count(Shell.TCP_REQUESTS);
            count(Shell.REQUESTS_HANDLED);
            long expiresAt = System.nanoTime() + requestTimeoutNanos;
            r.expiry = channel.eventLoop().schedule(
                    () -> dropRequest(r, "no reply within the request timeout of " + config.requestTimeout()),
                    requestTimeoutNanos, TimeUnit.NANOSECONDS);
            dispatcher.runHandler(handler, r, expiresAt, () -> count(Shell.REQUESTS_SKIPPED));
        }

        @Override
        public void reply(ServerRequest r, ByteBuffer payload, ByteBuf owner) {
            ByteBuf body = owner != null ? owner : Unpooled.wrappedBuffer(payload);
            count(Shell.REQUESTS_REPLIED);
            onLoop(body, () -> {
                cancelExpiry(r);
                answer(Unpooled.wrappedBuffer(TcpFrames.responseHeader(channel.alloc(), TcpFrames.OK, r.rpcId,
                        body.readableBytes()), body));
            });
        }

        @Override
        public void dropRequest(ServerRequest r, String why) {
            if (r.markDropped()) {
                count(Shell.REQUESTS_DROPPED);
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

        private void cancelExpiry(ServerRequest r) {
            if (r.expiry != null) {
                r.expiry.cancel(false);
                r.expiry = null;
            }
        }

        /** Writes a whole frame (released by Netty, also when the connection is gone). */
        private void answer(ByteBuf frame) {
            channel.writeAndFlush(frame, channel.voidPromise());
        }

        private void badInput(String what) {
            count(Shell.TCP_BAD_FRAMES);
            log.debug("TCP connection from {} closed: {}", peer, what);
            channel.close();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            // A frame over the size limit, a reset connection: the connection ends, the socket goes on.
            if (cause instanceof DecoderException) {
                badInput(cause.toString());
            } else {
                count(Shell.IO_ERRORS);
                log.debug("TCP connection from {} failed", peer, cause);
                channel.close();
            }
        }
    }
}
