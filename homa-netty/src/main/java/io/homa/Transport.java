package io.homa;

import io.homa.core.wire.WireFormat;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SelectStrategyFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.SocketProtocolFamily;
import io.netty.channel.socket.nio.NioChannelOption;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.spi.SelectorProvider;
import java.util.Collection;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The choice between Netty's epoll and NIO transports, and everything that depends on it: event
 * loop groups, datagram channels and their options. Epoll is used when the configuration allows it
 * and {@link Epoll#isAvailable()} (it is not with {@code -Dio.netty.transport.noNative=true}); the
 * first fallback to NIO is logged once, with the cause.
 *
 * <p>All sockets of one Homa socket share one UDP port: the first binds as usual (so it never
 * shares a port with a stranger), then gets SO_REUSEPORT, and the others bind to its port with
 * SO_REUSEPORT. (A port-0 bind with SO_REUSEPORT can be handed a port that another such socket of
 * the same user holds already, which is why the first bind goes without it.) The kernel spreads
 * incoming datagrams over all of them by peer address, so every one is read.
 */
final class Transport {
    private static final Logger log = LoggerFactory.getLogger(Transport.class);
    private static final AtomicBoolean FALLBACK_LOGGED = new AtomicBoolean();
    /**
     * Bytes of receive buffer per read; bounds {@code batch x datagram}: 1 MiB takes the full batch
     * of 32 datagrams at MTU 9,000 and still 16 at the 65,535 loopback MTU, without a read
     * allocating more than that.
     */
    private static final int MAX_READ_BUFFER = 1 << 20;
    /** A UDP payload can be at most this long (IPv4); GRO reads need room for it. */
    static final int MAX_UDP_PAYLOAD = 65_507;
    /**
     * Datagrams read from one socket before the engine is drained and its replies sent. Reading
     * far ahead keeps the kernel's queue from overflowing when sends get expensive (overload):
     * incoming ACKs and responses are what relieve the load, so they must not be dropped.
     */
    static final int MAX_MESSAGES_PER_READ = 1024;

    final boolean epoll;
    /** Whether several segments may leave in one send (UDP GSO via SegmentedDatagramPacket). */
    final boolean gso;
    /** Whether received segments may be coalesced by the kernel (UDP GRO). */
    final boolean gro;
    /** Largest datagram one receive slot holds. */
    final int receiveSlot;
    /** Datagrams read per system call (recvmmsg where above 1). */
    final int receiveBatch;
    private final HomaConfig config;

    Transport(HomaConfig config) {
        this.config = config;
        this.epoll = config.nativeTransport() && epollAvailable();
        this.gso = epoll && config.gso() && EpollDatagramChannel.isSegmentedDatagramPacketSupported();
        this.gro = epoll && config.gro();
        // A socket bound to an IPv6 address sizes its own datagrams for the 48-byte IPv6/UDP
        // header, but a dual-stack one also hears IPv4 peers, whose datagrams at the same MTU are
        // 20 bytes longer: a slot holds those too.
        int datagram = Math.max(config.engineConfig().maxDatagram(),
                Math.min(MAX_UDP_PAYLOAD, config.mtu() - WireFormat.IPV4_UDP_OVERHEAD));
        this.receiveSlot = gro ? MAX_UDP_PAYLOAD : datagram;
        // Netty splits a GRO read into its segments only on its single-datagram (recvmsg) path,
        // so GRO and recvmmsg batching exclude each other.
        this.receiveBatch = epoll && !gro
                ? Math.max(1, Math.min(config.receiveBatch(), MAX_READ_BUFFER / receiveSlot)) : 1;
    }

    private static boolean epollAvailable() {
        if (Epoll.isAvailable()) {
            return true;
        }
        if (FALLBACK_LOGGED.compareAndSet(false, true)) {
            Throwable cause = Epoll.unavailabilityCause();
            log.info("Homa uses Netty's NIO transport: epoll is unavailable ({})",
                    cause == null ? "no cause given" : cause.toString());
        }
        return false;
    }

    String name() {
        return epoll ? "epoll" : "nio";
    }

    /**
     * A group of {@code loops} event loops with daemon threads named {@code homa-io-<socket>-…};
     * each thread is added to {@code threads} as it is made, so that close() can join it.
     */
    MultiThreadIoEventLoopGroup newGroup(int loops, int socketSerial, Collection<Thread> threads) {
        SelectStrategyFactory strategy = config.busyPoll()
                ? () -> (selectNow, hasTasks) -> selectNow.get() // never sleep: poll, run tasks, repeat
                : null;
        IoHandlerFactory factory;
        if (epoll) {
            factory = strategy == null ? EpollIoHandler.newFactory() : EpollIoHandler.newFactory(0, strategy);
        } else {
            factory = strategy == null ? NioIoHandler.newFactory()
                    : NioIoHandler.newFactory(SelectorProvider.provider(), strategy);
        }
        ThreadFactory named = new DefaultThreadFactory("homa-io-" + socketSerial, true);
        ThreadFactory recorded = r -> {
            Thread t = named.newThread(r);
            threads.add(t);
            return t;
        };
        return new MultiThreadIoEventLoopGroup(loops, recorded, factory);
    }

    /**
     * Opens one datagram channel on {@code loop} and binds it.
     *
     * @param tos the IP TOS byte, or -1 to leave it alone
     * @param joinPort 0: the first socket of the port (bound to {@code address} without
     *                 SO_REUSEPORT, which is set afterwards when {@code shared}); else the port to
     *                 join with SO_REUSEPORT
     */
    Channel bind(EventLoop loop, InetSocketAddress address, int joinPort, boolean shared, int tos,
                 ChannelHandler handler) {
        boolean v6 = address.getAddress() instanceof Inet6Address;
        SocketProtocolFamily family = v6 ? SocketProtocolFamily.INET6 : SocketProtocolFamily.INET;
        Bootstrap b = new Bootstrap().group(loop).handler(handler);
        if (epoll) {
            b.channelFactory(() -> new EpollDatagramChannel(family));
        } else {
            b.channelFactory(() -> new NioDatagramChannel(family));
        }
        // Reading starts once every socket of the port is bound and its engine loop is ready.
        b.option(ChannelOption.AUTO_READ, false)
                .option(ChannelOption.SO_RCVBUF, config.receiveBufferBytes())
                .option(ChannelOption.SO_SNDBUF, config.sendBufferBytes())
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(1 << 20, 4 << 20))
                .option(ChannelOption.RECVBUF_ALLOCATOR,
                        new FixedRecvByteBufAllocator(receiveSlot * receiveBatch).maxMessagesPerRead(
                                MAX_MESSAGES_PER_READ));
        if (tos >= 0) {
            b.option(ChannelOption.IP_TOS, tos);
        }
        if (epoll) {
            if (receiveBatch > 1) {
                b.option(EpollChannelOption.MAX_DATAGRAM_PAYLOAD_SIZE, receiveSlot);
            }
            if (gro) {
                b.option(EpollChannelOption.UDP_GRO, true);
            }
        }
        boolean join = joinPort != 0;
        if (join) {
            setReusePort(b);
        }
        InetSocketAddress target = join ? new InetSocketAddress(address.getAddress(), joinPort) : address;
        ChannelFuture f = b.bind(target).awaitUninterruptibly();
        if (!f.isSuccess()) {
            throw new HomaException(HomaException.Kind.IO_ERROR,
                    "cannot bind a UDP socket to " + target + ": " + f.cause(), f.cause());
        }
        Channel ch = f.channel();
        if (!join && shared) {
            boolean ok = epoll ? ch.config().setOption(EpollChannelOption.SO_REUSEPORT, true)
                    : ch.config().setOption(NioChannelOption.of(StandardSocketOptions.SO_REUSEPORT), true);
            if (!ok) {
                ch.close().awaitUninterruptibly();
                throw new HomaException(HomaException.Kind.IO_ERROR,
                        "cannot set SO_REUSEPORT on " + ch.localAddress() + " (needed for priority sockets"
                                + " and several event loops; turn both off to use one socket)");
            }
        }
        return ch;
    }

    private void setReusePort(Bootstrap b) {
        if (epoll) {
            b.option(EpollChannelOption.SO_REUSEPORT, true);
        } else {
            b.option(NioChannelOption.of(StandardSocketOptions.SO_REUSEPORT), true);
        }
    }

    /** A TCP listening channel of this transport (TCP fallback). */
    ServerChannel newServerSocketChannel() {
        return epoll ? new EpollServerSocketChannel() : new NioServerSocketChannel();
    }

    /** A TCP connection channel of this transport (TCP fallback). */
    Channel newSocketChannel() {
        return epoll ? new EpollSocketChannel() : new NioSocketChannel();
    }

    /** The bound local address of a channel. */
    static InetSocketAddress localAddress(Channel ch) {
        return ((DatagramChannel) ch).localAddress();
    }
}
