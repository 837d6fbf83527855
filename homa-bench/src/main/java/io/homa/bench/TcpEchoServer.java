package io.homa.bench;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.GlobalEventExecutor;

import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The TCP baselines' echo server: one event loop thread accepts and serves every connection; each
 * frame is written back as it arrived (same id, same bytes, no copy), flushed once per read batch.
 */
public final class TcpEchoServer implements EchoServer {
    private final EventLoopGroup group;
    private final Channel serverChannel;
    /**
     * The accepted connections still open (a channel leaves the group when it closes); once the
     * group is closed, one accepted at that moment is closed as it is added.
     */
    private final ChannelGroup connections =
            new DefaultChannelGroup("tcp-echo-connections", GlobalEventExecutor.INSTANCE, true);
    private final InetSocketAddress address;
    private final AtomicBoolean closed = new AtomicBoolean();

    public TcpEchoServer() {
        this(new EchoHandler());
    }

    /**
     * A server whose frames go to {@code frameHandler} (a shareable handler that owns each frame it
     * reads) instead of being echoed: tests use it to answer out of order.
     */
    public TcpEchoServer(ChannelHandler frameHandler) {
        this(frameHandler, 0);
    }

    /** A server on {@link NettyIo#HOST} and {@code port} (0: ephemeral) whose frames go to {@code frameHandler}. */
    public TcpEchoServer(ChannelHandler frameHandler, int port) {
        group = NettyIo.newGroup(1, "tcp-server");
        try {
            serverChannel = new ServerBootstrap()
                    .group(group)
                    .channel(NettyIo.serverSocketChannel())
                    .option(ChannelOption.SO_BACKLOG, 1024)
                    .option(ChannelOption.SO_REUSEADDR, true)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childOption(ChannelOption.RECVBUF_ALLOCATOR, NettyIo.streamReads())
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            connections.add(ch);
                            ch.pipeline().addLast(new TcpFrameDecoder(), frameHandler);
                        }
                    })
                    .bind(new java.net.InetSocketAddress(NettyIo.HOST, port)).syncUninterruptibly().channel();
        } catch (RuntimeException e) {
            NettyIo.shutdown(group);
            throw e;
        }
        address = (InetSocketAddress) serverChannel.localAddress();
    }

    @Override
    public InetSocketAddress address() {
        return address;
    }

    /** Closes the listening socket and every connection (releasing partial frames), then the loop. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            serverChannel.close().awaitUninterruptibly();
            connections.close().awaitUninterruptibly();
            NettyIo.shutdown(group);
        }
    }

    /** Writes every frame back; flushes when the read batch ends. */
    @ChannelHandler.Sharable
    static final class EchoHandler extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.write(msg, ctx.voidPromise());
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
