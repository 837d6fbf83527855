package io.homa.internal.transport;

import io.homa.internal.Failure;
import io.homa.internal.ShellConfig;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SelectStrategy;
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
import io.netty.channel.unix.UnixChannelOption;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringChannelOption;
import io.netty.channel.uring.IoUringDatagramChannel;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringIoHandlerConfig;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.ThreadAwareExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayList;
import java.util.Collection;
import java.util.function.IntSupplier;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The choice between Netty's io_uring, epoll and NIO transports, and everything that depends on
 * it: event loop groups, datagram channels and their options. The configuration names a
 * preference ({@code HomaConfig.ioTransport()}); a native transport the process cannot use falls
 * back to the other native one and then to NIO, in one log line with the causes (once per process)
 * ({@code -Dio.netty.transport.noNative=true} turns both native ones off). What io_uring lacks
 * here: UDP GRO (not offered as a channel option by Netty's io_uring datagram channel) and busy
 * polling (its I/O handler takes no select strategy); those settings are then off.
 *
 * <p>All sockets of one Homa socket share one UDP port: the first binds as usual (so it never
 * shares a port with a stranger), then gets SO_REUSEPORT, and the others bind to its port with
 * SO_REUSEPORT. (A port-0 bind with SO_REUSEPORT can be handed a port that another such socket of
 * the same user holds already, which is why the first bind goes without it.) The kernel spreads
 * incoming datagrams over all of them by peer address, so every one is read.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class Transport {
    private static final Logger log = LoggerFactory.getLogger(Transport.class);
    /** The fallbacks logged already: each distinct one once per process. */
    private static final Set<String> FALLBACK_LOGGED = ConcurrentHashMap.newKeySet();
    private static final AtomicBoolean BAD_PROPERTY_LOGGED = new AtomicBoolean();
    private static final AtomicBoolean CALLER_READS_LOGGED = new AtomicBoolean();
    private static final AtomicBoolean SMALL_RECEIVE_BUFFER_LOGGED = new AtomicBoolean();
    private static final boolean LINUX = System.getProperty("os.name", "").startsWith("Linux");

    /** Netty's transports, by the name the socket reports. */
    public enum Kind {
        IO_URING("io_uring"), EPOLL("epoll"), NIO("nio");

        final String label;

        Kind(String label) {
            this.label = label;
        }
    }

    /**
     * {@code HomaConfig.IoTransport.AUTO}'s order: epoll first, as measured side by side with
     * io_uring (docs/netty.md, "Transports"), io_uring where epoll cannot load.
     */
    static final List<Kind> AUTO_ORDER = List.of(Kind.EPOLL, Kind.IO_URING);

    /**
     * Bytes of receive buffer per read; bounds {@code batch x datagram}: 1 MiB takes the full batch
     * of 32 datagrams at MTU 9,000 and still 16 at the 65,535 loopback MTU, without a read
     * allocating more than that.
     */
    private static final int MAX_READ_BUFFER = 1 << 20;
    /** A UDP payload can be at most this long (IPv4); GRO reads need room for it. */
    public static final int MAX_UDP_PAYLOAD = 65_507;
    /**
     * Datagrams read from one socket before the engine is drained and its replies sent. Reading
     * far ahead keeps the kernel's queue from overflowing when sends get expensive (overload):
     * incoming ACKs and responses are what relieve the load, so they must not be dropped.
     */
    static final int MAX_MESSAGES_PER_READ = 1024;
    /**
     * Submission queue entries of an io_uring loop. Netty's default (128) is for stream sockets;
     * here one read posts a receive per batch slot on each of up to 8 sockets, and a flush a send
     * per datagram, so a deeper ring saves submissions. A round size, not a measured optimum.
     */
    private static final int IO_URING_RING_SIZE = 512;

    public final Kind kind;
    /** Whether this is epoll (for the options only epoll has). */
    public final boolean epoll;
    /** Whether several segments may leave in one send (UDP GSO via SegmentedDatagramPacket). */
    public final boolean gso;
    /** Whether received segments may be coalesced by the kernel (UDP GRO; epoll only). */
    public final boolean gro;
    /** Largest datagram one receive slot holds. */
    public final int receiveSlot;
    /** Datagrams read per system call (recvmmsg, or a batch of io_uring receives, where above 1). */
    public final int receiveBatch;
    /**
     * The system property that tells the AUTO preference which transport to take: the API's
     * {@code HomaConfig.IO_TRANSPORT_PROPERTY}.
     */
    static final String PROPERTY = "io.homa.ioTransport";
    /** The preferences a configuration or the property may name. */
    static final List<String> PREFERENCES = List.of("AUTO", "IO_URING", "EPOLL", "NIO");

    private final ShellConfig config;
    /** The epoll loops whose reads a waiting caller may take over ({@link #callerReads}), by loop. */
    private final Map<ThreadAwareExecutor, ReadTakeover> takeovers = ReadTakeover.newRegistry();

    public Transport(ShellConfig config) {
        this.config = config;
        this.kind = choose(config);
        this.epoll = kind == Kind.EPOLL;
        this.gso = config.gso() && switch (kind) {
            case EPOLL -> EpollDatagramChannel.isSegmentedDatagramPacketSupported();
            case IO_URING -> IoUringDatagramChannel.isSegmentedDatagramPacketSupported();
            case NIO -> false;
        };
        this.gro = epoll && config.gro();
        // A slot holds the largest UDP datagram, whatever our own MTU: a peer with a larger MTU
        // (a socket bound to 127.0.0.1 answering one bound to the wildcard, or an IPv4 peer of a
        // dual-stack socket) sends longer datagrams, which a smaller slot would cut short. (Before
        // DATA carried its segment length, a cut datagram passed for a short segment; now it is
        // dropped as BAD_LENGTH, and its retransmission would be cut again.) With GRO a slot holds
        // a whole coalesced datagram too. Netty's recvmmsg path reads no control messages, so a
        // coalesced datagram reaches the engine whole, segment size unknown: the engine walks it
        // by each packet's own length (HomaEngine.onDatagram). That keeps GRO and many datagrams
        // per system call together.
        this.receiveSlot = MAX_UDP_PAYLOAD;
        this.receiveBatch = kind != Kind.NIO
                ? Math.max(1, Math.min(config.receiveBatch(), MAX_READ_BUFFER / receiveSlot)) : 1;
    }

    /** The first transport of the configuration's preference that this process can use. */
    private static Kind choose(ShellConfig config) {
        if (!config.nativeTransport()) {
            return Kind.NIO;
        }
        String asked = config.ioTransport();
        if (asked.equals("AUTO")) {
            asked = fromProperty();
        }
        List<Kind> order = switch (asked) {
            case "IO_URING" -> List.of(Kind.IO_URING, Kind.EPOLL);
            case "EPOLL" -> List.of(Kind.EPOLL, Kind.IO_URING);
            case "NIO" -> List.of();
            default -> AUTO_ORDER;
        };
        List<String> skipped = new ArrayList<>();
        Kind chosen = Kind.NIO;
        for (Kind k : order) {
            Throwable cause = unavailability(k);
            if (cause == null) {
                chosen = k;
                break;
            }
            skipped.add(k.label + " is unavailable (" + cause + ")");
        }
        if (!skipped.isEmpty() && FALLBACK_LOGGED.add(chosen + " " + skipped)) {
            log.info("Homa uses Netty's {} transport: {}", chosen.label, String.join("; ", skipped));
        }
        return chosen;
    }

    /** The transport {@link #PROPERTY} names, or AUTO (unset or unknown: logged once). */
    private static String fromProperty() {
        String v = System.getProperty(PROPERTY);
        if (v == null || v.isBlank()) {
            return "AUTO";
        }
        for (String t : PREFERENCES) {
            if (t.equalsIgnoreCase(v.trim())) {
                return t;
            }
        }
        if (BAD_PROPERTY_LOGGED.compareAndSet(false, true)) {
            log.warn("-D{}={} names no transport (io_uring, epoll, nio or auto); ignored", PROPERTY, v);
        }
        return "AUTO";
    }

    /** Null if {@code kind} works in this process, else why not. */
    private static Throwable unavailability(Kind kind) {
        return switch (kind) {
            case EPOLL -> Epoll.isAvailable() ? null : reason(Epoll.unavailabilityCause());
            case IO_URING -> IoUring.isAvailable() ? null : reason(IoUring.unavailabilityCause());
            case NIO -> null;
        };
    }

    private static Throwable reason(Throwable cause) {
        return cause != null ? cause : new UnsupportedOperationException("no cause given");
    }

    /**
     * Whether a caller blocked on its call may wait for the response on the sockets of its event
     * loop itself ({@code HomaConfig.callerReads}) in a socket of {@code loops} event loops: on
     * epoll, with the caller's own sends, one loop (with several, a response may arrive at another
     * loop's socket), no injected faults, and where
     * reflection reaches Netty's epoll wait ({@link WaiterEpoll#UNAVAILABLE}, logged once).
     */
    public boolean callerReads(int loops) {
        boolean wanted = epoll && config.callerReads() && config.callerSends() && loops == 1 && !config.faultInjection();
        if (wanted && WaiterEpoll.UNAVAILABLE != null && CALLER_READS_LOGGED.compareAndSet(false, true)) {
            log.info("Homa: a caller waiting for its response cannot read it itself here (callerReads), so the event"
                    + " loop wakes it instead; on the module path, --add-opens"
                    + " io.netty.transport.classes.epoll/io.netty.channel.epoll=io.homa allows it ({})", WaiterEpoll.UNAVAILABLE);
        }
        return wanted && WaiterEpoll.UNAVAILABLE == null;
    }

    /** The read take-over of {@code loop}'s sockets, or null where callers do not read ({@link #callerReads}). */
    public ReadTakeover readTakeover(EventLoop loop) {
        return takeovers.get(loop);
    }

    public String name() {
        return kind.label;
    }

    /**
     * A group of {@code loops} event loops with daemon threads named {@code homa-io-<socket>-…};
     * each thread is added to {@code threads} as it is made, so that close() can join it.
     *
     * @param busyChoice with busy polling, asked on the loop before each select when it has no
     *                   tasks: {@link SelectStrategy#SELECT} when a caller spins on the loop's
     *                   sockets ({@code HomaConfig.callerSpin}) and the loop should sleep in its
     *                   select instead, so that one thread per side spins, not two;
     *                   {@link SelectStrategy#CONTINUE} when the loop has just looked at its
     *                   sockets itself and Netty's select may wait a few turns; 0: select now
     */
    public MultiThreadIoEventLoopGroup newGroup(int loops, int socketSerial, Collection<Thread> threads,
                                                IntSupplier busyChoice) {
        SelectStrategyFactory strategy = config.busyPoll()
                // Never sleep (poll, run tasks, repeat), unless a caller spins for us.
                ? () -> (selectNow, hasTasks) -> {
                    int choice = hasTasks ? 0 : busyChoice.getAsInt();
                    return choice == 0 ? selectNow.get() : choice;
                }
                : null;
        IoHandlerFactory factory = switch (kind) {
            case EPOLL -> {
                IoHandlerFactory epoll = strategy == null ? EpollIoHandler.newFactory() : EpollIoHandler.newFactory(0, strategy);
                yield callerReads(loops) ? ReadTakeover.factory(epoll, takeovers) : epoll;
            }
            // No select strategy on io_uring: busy polling is off there.
            case IO_URING -> IoUringIoHandler.newFactory(new IoUringIoHandlerConfig().setRingSize(IO_URING_RING_SIZE));
            case NIO -> strategy == null ? NioIoHandler.newFactory()
                    : NioIoHandler.newFactory(SelectorProvider.provider(), strategy);
        };
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
    public Channel bind(EventLoop loop, InetSocketAddress address, int joinPort, boolean shared, int tos,
                 ChannelHandler handler) {
        boolean v6 = address.getAddress() instanceof Inet6Address;
        SocketProtocolFamily family = v6 ? SocketProtocolFamily.INET6 : SocketProtocolFamily.INET;
        Bootstrap b = new Bootstrap().group(loop).handler(handler);
        switch (kind) {
            case EPOLL -> b.channelFactory(() -> new EpollDatagramChannel(family));
            case IO_URING -> b.channelFactory(() -> new IoUringDatagramChannel(family));
            case NIO -> b.channelFactory(() -> new NioDatagramChannel(family));
        }
        // Reading starts once every socket of the port is bound and its engine loop is ready.
        b.option(ChannelOption.AUTO_READ, false)
                .option(ChannelOption.SO_RCVBUF, config.receiveBufferBytes())
                .option(ChannelOption.SO_SNDBUF, config.sendBufferBytes())
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(1 << 20, 4 << 20))
                .option(ChannelOption.RECVBUF_ALLOCATOR, epoll && receiveBatch > 1
                        ? new BatchedReads(receiveSlot * receiveBatch, MAX_MESSAGES_PER_READ)
                        : new FixedRecvByteBufAllocator(receiveSlot * receiveBatch).maxMessagesPerRead(
                                MAX_MESSAGES_PER_READ));
        if (tos >= 0) {
            b.option(ChannelOption.IP_TOS, tos);
        }
        if (receiveBatch > 1) {
            b.option(epoll ? EpollChannelOption.MAX_DATAGRAM_PAYLOAD_SIZE : IoUringChannelOption.MAX_DATAGRAM_PAYLOAD_SIZE,
                    receiveSlot);
        }
        if (gro) {
            b.option(EpollChannelOption.UDP_GRO, true);
        }
        boolean join = joinPort != 0;
        if (join) {
            setReusePort(b);
        }
        InetSocketAddress target = join ? new InetSocketAddress(address.getAddress(), joinPort) : address;
        ChannelFuture f = b.bind(target).awaitUninterruptibly();
        if (!f.isSuccess()) {
            throw config.failures().create(Failure.IO_ERROR,
                    "cannot bind a UDP socket to " + target + ": " + f.cause(), f.cause());
        }
        Channel ch = f.channel();
        warnIfReceiveBufferCapped(ch);
        if (!join && shared) {
            boolean ok = ch.config().setOption(reusePort(), true);
            if (!ok) {
                ch.close().awaitUninterruptibly();
                throw config.failures().create(Failure.IO_ERROR,
                        "cannot set SO_REUSEPORT on " + ch.localAddress() + " (needed for priority sockets"
                                + " and several event loops; turn both off to use one socket)");
            }
        }
        return ch;
    }

    /**
     * Says once per process when the kernel gave a socket less receive buffer than configured
     * (Linux caps SO_RCVBUF at {@code net.core.rmem_max}, 208 KiB on a stock kernel, and reports
     * twice what it keeps): the grant budget then exceeds what the socket holds while its event
     * loop is late, and the datagrams beyond it are lost and sent again after a RESEND.
     */
    private void warnIfReceiveBufferCapped(Channel ch) {
        if (SMALL_RECEIVE_BUFFER_LOGGED.get()) {
            return;
        }
        Integer reported;
        try {
            reported = ch.config().getOption(ChannelOption.SO_RCVBUF);
        } catch (RuntimeException e) {
            return; // closed meanwhile: nothing to say about it
        }
        // Linux keeps twice the size set (the other half for its bookkeeping) and reports that.
        long kept = reported == null ? Long.MAX_VALUE : LINUX ? reported / 2 : reported;
        int asked = config.receiveBufferBytes();
        if (kept < asked && SMALL_RECEIVE_BUFFER_LOGGED.compareAndSet(false, true)) {
            log.warn("Homa: the kernel gave {} a receive buffer of {} bytes, not the {} configured (receiveBufferBytes);"
                    + " on Linux, net.core.rmem_max caps it: raise it (sysctl -w net.core.rmem_max={}) or datagrams"
                    + " that arrive while the event loop is late are dropped and resent (docs/tuning.md)",
                    ch.localAddress(), kept, asked, asked);
        }
    }

    private void setReusePort(Bootstrap b) {
        b.option(reusePort(), true);
    }

    /** SO_REUSEPORT as this transport's channels spell it. */
    private ChannelOption<Boolean> reusePort() {
        return kind == Kind.NIO ? NioChannelOption.of(StandardSocketOptions.SO_REUSEPORT) : UnixChannelOption.SO_REUSEPORT;
    }

    /** A TCP listening channel of this transport (TCP fallback). */
    public ServerChannel newServerSocketChannel() {
        return switch (kind) {
            case EPOLL -> new EpollServerSocketChannel();
            case IO_URING -> new IoUringServerSocketChannel();
            case NIO -> new NioServerSocketChannel();
        };
    }

    /** A TCP connection channel of this transport (TCP fallback). */
    public Channel newSocketChannel() {
        return switch (kind) {
            case EPOLL -> new EpollSocketChannel();
            case IO_URING -> new IoUringSocketChannel();
            case NIO -> new NioSocketChannel();
        };
    }

    /** The bound local address of a channel. */
    public static InetSocketAddress localAddress(Channel ch) {
        return ((DatagramChannel) ch).localAddress();
    }
}
