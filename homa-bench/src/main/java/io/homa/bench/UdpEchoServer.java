package io.homa.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.socket.DatagramPacket;

import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code udp-raw}'s server: sends every datagram back to its sender unchanged (the received buffer
 * itself, no copy), flushing once per read batch (so several replies leave in one sendmmsg). No protocol at all: the floor for small messages.
 */
public final class UdpEchoServer implements EchoServer {
    /** Receive room per datagram: the largest udp-raw message and its id fit. */
    static final int MAX_DATAGRAM = 2048;
    /** Datagrams per receive call with epoll (recvmmsg), as Homa's shell batches its reads. */
    static final int RECEIVE_BATCH = 16;
    /** Kernel socket buffers, large enough that a window of small calls never overflows them. */
    static final int SOCKET_BUFFER = 1 << 20;

    private final EventLoopGroup group;
    private final Channel channel;
    private final InetSocketAddress address;
    private final AtomicBoolean closed = new AtomicBoolean();

    public UdpEchoServer() {
        group = NettyIo.newGroup(1, "udp-server");
        try {
            channel = configure(new Bootstrap().group(group))
                    .handler(new Echo())
                    .bind(NettyIo.anyPort()).syncUninterruptibly().channel();
        } catch (RuntimeException e) {
            NettyIo.shutdown(group);
            throw e;
        }
        address = (InetSocketAddress) channel.localAddress();
    }

    /**
     * The datagram socket setup shared by udp-raw's server and client: large kernel buffers, and
     * with epoll batched receives (several datagrams per recvmmsg call into one buffer; each
     * arrives as its own packet, a slice of that buffer).
     */
    static Bootstrap configure(Bootstrap b) {
        b.channel(NettyIo.datagramChannel())
                .option(ChannelOption.SO_RCVBUF, SOCKET_BUFFER)
                .option(ChannelOption.SO_SNDBUF, SOCKET_BUFFER);
        if (NettyIo.epoll()) {
            b.option(EpollChannelOption.MAX_DATAGRAM_PAYLOAD_SIZE, MAX_DATAGRAM)
                    .option(ChannelOption.RCVBUF_ALLOCATOR, new FixedRecvByteBufAllocator(MAX_DATAGRAM * RECEIVE_BATCH));
        } else {
            b.option(ChannelOption.RCVBUF_ALLOCATOR, new FixedRecvByteBufAllocator(MAX_DATAGRAM));
        }
        return b;
    }

    @Override
    public InetSocketAddress address() {
        return address;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            channel.close().awaitUninterruptibly();
            NettyIo.shutdown(group);
        }
    }

    private static final class Echo extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            DatagramPacket in = (DatagramPacket) msg;
            // The reply takes over the received buffer: ownership passes to the write.
            ctx.write(new DatagramPacket(in.content(), in.sender()), ctx.voidPromise());
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            // A datagram socket survives a failed send (e.g. ICMP unreachable): keep serving.
        }
    }
}
