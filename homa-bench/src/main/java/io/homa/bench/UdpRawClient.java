package io.homa.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.DatagramPacket;
import io.netty.util.collection.LongObjectHashMap;
import io.netty.util.collection.LongObjectMap;

import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code udp-raw}: each call is one datagram {@code [id u64][payload]}, and the echoed datagram's
 * first 8 bytes name the call it answers. No retransmission, no segmentation, no congestion
 * control: messages of at most {@link #MAX_MESSAGE} bytes, and a lost datagram leaves its call
 * pending until the caller gives up or the client closes. The floor under any protocol.
 *
 * <p>Threads: one event loop owns the socket and the pending calls; one hand-off per call.
 */
public final class UdpRawClient implements EchoClient {
    /** Largest payload: with the id it stays within a 1,500-byte Ethernet MTU. */
    public static final int MAX_MESSAGE = 1400;
    /** Bytes of the call id in front of the payload. */
    public static final int ID_FIELD = 8;

    private final EventLoopGroup group;
    private final EventLoop loop;
    private final Channel channel;
    private final FlushBatcher flusher;
    private final InetSocketAddress server;
    private final AtomicLong ids = new AtomicLong(1);
    private final AtomicBoolean closed = new AtomicBoolean();
    private final LongObjectMap<CompletableFuture<byte[]>> pending = new LongObjectHashMap<>();

    public UdpRawClient(InetSocketAddress server) {
        this.server = server;
        group = NettyIo.newGroup(1, "udp-client");
        loop = group.next();
        try {
            channel = UdpEchoServer.configure(new Bootstrap().group(loop))
                    .handler(new ReplyHandler())
                    .bind(NettyIo.anyPort()).syncUninterruptibly().channel();
        } catch (RuntimeException e) {
            NettyIo.shutdown(group);
            throw e;
        }
        flusher = new FlushBatcher(channel);
    }

    @Override
    public CompletableFuture<byte[]> call(byte[] request) {
        if (request.length > MAX_MESSAGE) {
            throw new IllegalArgumentException("udp-raw carries at most " + MAX_MESSAGE + " bytes, not " + request.length);
        }
        CompletableFuture<byte[]> result = new CompletableFuture<>();
        if (closed.get()) {
            result.completeExceptionally(new ClosedChannelException());
            return result;
        }
        long id = ids.getAndIncrement();
        ByteBuf content = channel.alloc().directBuffer(ID_FIELD + request.length);
        content.writeLong(id).writeBytes(request);
        DatagramPacket packet = new DatagramPacket(content, server);
        NettyIo.onLoop(loop, () -> send(id, packet, result), () -> {
            packet.release();
            result.completeExceptionally(new ClosedChannelException());
        });
        return result;
    }

    private void send(long id, DatagramPacket packet, CompletableFuture<byte[]> result) {
        if (!channel.isActive()) {
            packet.release();
            result.completeExceptionally(new ClosedChannelException());
            return;
        }
        pending.put(id, result);
        flusher.write(packet);
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
            failAll(new ClosedChannelException());
        }
    }

    private final class ReplyHandler extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            DatagramPacket packet = (DatagramPacket) msg;
            try {
                ByteBuf in = packet.content();
                if (in.readableBytes() < ID_FIELD) {
                    return; // not ours
                }
                CompletableFuture<byte[]> result = pending.remove(in.getLong(in.readerIndex()));
                if (result != null) {
                    byte[] reply = new byte[in.readableBytes() - ID_FIELD];
                    in.getBytes(in.readerIndex() + ID_FIELD, reply);
                    result.complete(reply);
                }
            } finally {
                packet.release();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            // A failed send (e.g. ICMP port unreachable) leaves its call pending; keep the socket.
        }
    }
}
