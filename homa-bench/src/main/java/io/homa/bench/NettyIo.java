package io.homa.bench;

import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The Netty runtime shared by the baselines: epoll when the native transport loads (as homa-netty
 * uses), NIO otherwise. {@code -Dio.netty.transport.noNative=true} forces NIO.
 */
public final class NettyIo {
    private static final Logger LOG = LoggerFactory.getLogger(NettyIo.class);
    private static final AtomicBoolean REPORTED = new AtomicBoolean();

    /** The system property that names the address every benchmark socket binds (default: loopback). */
    public static final String HOST_PROPERTY = "homa.bench.host";

    /**
     * Every benchmark socket binds here: the loopback address, so that traffic never leaves the
     * host, unless {@link #HOST_PROPERTY} names another (the address a JVM has in a network
     * namespace of the benchmark's own, for the veth path).
     */
    public static final InetAddress HOST = host();

    private static InetAddress host() {
        String v = System.getProperty(HOST_PROPERTY);
        if (v == null || v.isBlank()) {
            return InetAddress.getLoopbackAddress();
        }
        try {
            return InetAddress.getByName(v.trim());
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException("-D" + HOST_PROPERTY + "=" + v + " is no address", e);
        }
    }

    private NettyIo() {
    }

    /** Whether the epoll transport is in use. */
    public static boolean epoll() {
        boolean available = Epoll.isAvailable();
        if (!available && REPORTED.compareAndSet(false, true)) {
            LOG.warn("epoll unavailable, the baselines use NIO: {}", String.valueOf(Epoll.unavailabilityCause()));
        }
        return available;
    }

    /** "epoll" or "nio". */
    public static String transportName() {
        return epoll() ? "epoll" : "nio";
    }

    /** {@link #HOST} with an ephemeral port. */
    public static InetSocketAddress anyPort() {
        return new InetSocketAddress(HOST, 0);
    }

    /**
     * Runs {@code task} on {@code loop}: at once when called from the loop, else queued; if the
     * loop refuses it (it is shutting down), runs {@code refused} on the calling thread instead.
     */
    public static void onLoop(EventExecutor loop, Runnable task, Runnable refused) {
        if (loop.inEventLoop()) {
            task.run();
            return;
        }
        try {
            loop.execute(task);
        } catch (RejectedExecutionException e) {
            refused.run();
        }
    }

    /** A group of {@code threads} event loops on daemon threads named {@code name-N}. */
    public static EventLoopGroup newGroup(int threads, String name) {
        IoHandlerFactory factory = epoll() ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        return new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(name, true), factory);
    }

    /**
     * Reads of a TCP connection: adaptive sizes up to 256 KiB (Netty's default stops at 64 KiB), so
     * that a bulk transfer takes a few large reads per wake-up rather than many small ones, while
     * short messages still get small buffers. Not larger: a read holds the socket's lock while it
     * copies, and on loopback the peer's sends into that socket wait for it; with 1 MiB reads one
     * connection carried 0.73-0.90 of what four did (tcp-single/tcp-pool, throughput-1MB), with
     * 256 KiB 0.96-1.00 (docs/benchmarks.md).
     */
    public static RecvByteBufAllocator streamReads() {
        return new AdaptiveRecvByteBufAllocator(64, 2048, 256 << 10);
    }

    public static Class<? extends SocketChannel> socketChannel() {
        return epoll() ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    public static Class<? extends ServerChannel> serverSocketChannel() {
        return epoll() ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    public static Class<? extends DatagramChannel> datagramChannel() {
        return epoll() ? EpollDatagramChannel.class : NioDatagramChannel.class;
    }

    /**
     * Stops a group without a quiet period and waits (bounded) for its threads to end. Close every
     * channel of the group first: Netty 4.2 closes a loop's remaining channels only after an I/O
     * pass, and a shutdown requested just after that pass ends the loop without closing them, so
     * their pipelines never see {@code channelInactive} and a decoder's partial frame is never
     * released (the leak that failed CompareCommandTest.smoke now and then).
     */
    public static void shutdown(EventLoopGroup group) {
        if (group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
    }
}
