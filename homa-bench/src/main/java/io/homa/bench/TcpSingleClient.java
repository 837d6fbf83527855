package io.homa.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.collection.LongObjectHashMap;
import io.netty.util.collection.LongObjectMap;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code tcp-single}: every call of this client shares one TCP connection (the gRPC/HTTP2 pattern).
 * Calls are matched to replies by id, so replies may come back in any order; a long message on the
 * connection delays everything behind it in both directions (head-of-line blocking).
 *
 * <p>Threads: one event loop owns the connection and the table of pending calls. A call costs one
 * hand-off into the loop (none when made from the loop); its future completes on the loop.
 */
public final class TcpSingleClient implements EchoClient {
    private final EventLoopGroup group;
    private final EventLoop loop;
    private final Channel channel;
    private final FlushBatcher flusher;
    private final AtomicLong ids = new AtomicLong(1);
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Calls awaiting a reply, by id; touched only on {@link #loop}. */
    private final LongObjectMap<CompletableFuture<byte[]>> pending = new LongObjectHashMap<>();

    public TcpSingleClient(InetSocketAddress server) {
        group = NettyIo.newGroup(1, "tcp-single-client");
        loop = group.next();
        try {
            channel = new Bootstrap()
                    .group(loop)
                    .channel(NettyIo.socketChannel())
                    .option(ChannelOption.TCP_NODELAY, true)
                    .option(ChannelOption.RECVBUF_ALLOCATOR, NettyIo.streamReads())
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(new TcpFrameDecoder(), new ReplyHandler());
                        }
                    })
                    .connect(server, NettyIo.anyPort()).syncUninterruptibly().channel();
        } catch (RuntimeException e) {
            NettyIo.shutdown(group);
            throw e;
        }
        flusher = new FlushBatcher(channel);
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
        ByteBuf frame = TcpFrames.encode(channel.alloc(), id, request);
        NettyIo.onLoop(loop, () -> send(id, frame, result), () -> {
            frame.release();
            result.completeExceptionally(new ClosedChannelException());
        });
        return result;
    }

    private void send(long id, ByteBuf frame, CompletableFuture<byte[]> result) {
        if (!channel.isActive()) {
            frame.release();
            result.completeExceptionally(new ClosedChannelException());
            return;
        }
        pending.put(id, result);
        flusher.write(frame);
    }

    /** Number of calls awaiting a reply (read on any thread: approximate). */
    public int outstanding() {
        return pending.size();
    }

    private void failAll(Throwable cause) {
        if (pending.isEmpty()) {
            return;
        }
        List<CompletableFuture<byte[]>> failed = new ArrayList<>(pending.values());
        pending.clear();
        for (CompletableFuture<byte[]> f : failed) {
            f.completeExceptionally(cause);
        }
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            channel.close().awaitUninterruptibly();
            NettyIo.shutdown(group);
            failAll(new ClosedChannelException()); // the loop has ended: no race left
        }
    }

    private final class ReplyHandler extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf frame = (ByteBuf) msg;
            try {
                CompletableFuture<byte[]> result = pending.remove(TcpFrames.id(frame));
                if (result != null) {
                    result.complete(TcpFrames.payload(frame));
                }
            } finally {
                frame.release();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            failAll(new ClosedChannelException());
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            failAll(new IOException("tcp-single connection failed", cause));
            ctx.close();
        }
    }
}
