package io.homa.bench;

import io.homa.HomaConfig;
import io.homa.HomaKeyRing;
import io.homa.HomaSecurity;
import io.homa.HomaSocket;
import io.homa.micrometer.HomaMetricsBinder;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code homa}: the project's own transport through its public API ({@link HomaSocket}). Server
 * and client are separate sockets on 127.0.0.1, each with its own event loop, like the baselines.
 *
 * <p>Settings that differ from {@link HomaConfig#defaults()}, so that the comparison is like for
 * like:
 * <ul>
 * <li>{@code inlineExecution(true)}: the echo handler runs and call futures complete on the event
 *     loop, as the baselines' do (the default hands each off to an executor thread: one more
 *     wake-up per RPC, tens of microseconds on a small machine). The handler never blocks.
 *     {@code homa.bench.inlineExecution=false} keeps the default (the socket's handler executor),
 *     to measure what that hand-off costs a user who keeps it.</li>
 * </ul>
 * The MTU follows the interface (65,535 on loopback, as HomaConfig does by default); the system
 * property {@code homa.bench.mtu} (e.g. 1500) overrides it, {@code homa.bench.linkMbps} sets the link
 * rate (a testbed's emulated links), {@code homa.bench.unscheduledBytes} the bytes a message sends
 * before its first grant, {@code homa.bench.maxIncoming} the
 * receiver's grant budget, {@code homa.bench.receiveBatch} the datagrams per receive batch;
 * {@code homa.bench.busyPoll=true} makes the event loops spin; {@code homa.bench.tickMicros} sets
 * the engine's timer tick ({@link HomaConfig.Builder#tick}); {@code homa.bench.callerSpinMicros},
 * {@code homa.bench.callerSends} and {@code homa.bench.callerReads} set {@link HomaConfig#callerSpin()},
 * {@link HomaConfig#callerSends()} and {@link HomaConfig#callerReads()}; {@code homa.bench.maxNicQueueMicros},
 * {@code homa.bench.grantBatchSegments} and {@code homa.bench.pacer=true|false} set the pacer's queue,
 * the grant batch and the pacer itself (off by default unless {@code linkMbps} or
 * {@code maxNicQueueMicros} is set, as in homa-netty; for experiments; with {@code --path veth} pass them in
 * {@code JAVA_TOOL_OPTIONS}, which the JVMs in the namespaces inherit).
 * Variants: {@link #on} one named Netty transport (io_uring, epoll, NIO), {@link #twoClientSockets()}
 * two client sockets per client, {@link #twoLoops()} two
 * engines per socket. {@link #withMicrometer()} (compare's {@code --micrometer}) attaches a
 * {@link HomaMetricsBinder} to every socket, so that a run measures its overhead (its timers record
 * every call; nothing scrapes).
 */
public final class HomaTransport implements Transport {

    private final String name;
    /** Netty transport of every socket ({@code AUTO}: the socket's default choice). */
    private final HomaConfig.IoTransport io;
    /** Event loops (engines) per socket. */
    private final int loops;
    private final HomaConfig config;
    /** Where every socket's meters go, or null: no binder. */
    private final MeterRegistry registry;
    /** Client sockets per client ({@code homa-2clients}: 2, its calls spread round-robin). */
    private final int clientSockets;
    /** Whether every datagram is sealed ({@code homa-psp}). */
    private final boolean secured;
    /** The JCA provider of the sealing's AES-GCM ({@code homa-psp-accp}); null: the JCA's order (the JDK's). */
    private final java.security.Provider cipherProvider;

    /**
     * The master key of {@code homa-psp}: fixed, so that the server's JVM (compare runs servers
     * in processes of their own) holds the client's key. A benchmark key, never a real one.
     */
    private static final byte[] BENCH_KEY = new byte[32];

    static {
        for (int i = 0; i < BENCH_KEY.length; i++) {
            BENCH_KEY[i] = (byte) (0x5A ^ i * 7);
        }
    }

    /** {@code homa}: the default configuration's transport, one event loop. */
    public HomaTransport() {
        this(Transports.HOMA, HomaConfig.IoTransport.AUTO, 1, null, false, null);
    }

    /**
     * {@code homa-psp}: {@code homa} with every datagram sealed ({@code HomaConfig.Builder.security},
     * pre-shared AES-GCM-128 keys): what the security layer costs, against {@code homa} in the same run.
     */
    public static HomaTransport secured() {
        return new HomaTransport(Transports.HOMA_PSP, HomaConfig.IoTransport.AUTO, 1, null, true, null);
    }

    /**
     * {@code homa-psp-accp}: {@code homa-psp} with its AES-GCM from Amazon Corretto Crypto Provider
     * ({@code HomaSecurity.cipherProvider}) instead of the JDK's: what a faster provider buys.
     *
     * @throws IllegalStateException if the provider's native library does not load here
     */
    public static HomaTransport securedWithAccp() {
        com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider accp =
                com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider.INSTANCE;
        if (accp.getLoadingError() != null) {
            throw new IllegalStateException(Transports.HOMA_PSP_ACCP + " cannot run here: Amazon Corretto Crypto Provider did not load",
                    accp.getLoadingError());
        }
        return new HomaTransport(Transports.HOMA_PSP_ACCP, HomaConfig.IoTransport.AUTO, 1, null, true, accp);
    }

    /**
     * {@code homa-epoll}, {@code homa-iouring}, {@code homa-nio}: the same on one named Netty
     * transport. Where it cannot run the socket falls back (and logs why); results.json's
     * {@code machine.homa_transports} records what each name really ran on.
     */
    public static HomaTransport on(String name, HomaConfig.IoTransport io) {
        return new HomaTransport(name, io, 1, null, false, null);
    }

    /**
     * {@code homa-2loops}: two event loops, each with its own engine, on every socket's one port
     * (SO_REUSEPORT). Compare runs it in the throughput scenarios only: what a second core's
     * engine adds to one client and one server.
     */
    public static HomaTransport twoLoops() {
        return new HomaTransport(Transports.HOMA_2LOOPS, HomaConfig.IoTransport.AUTO, 2, null, false, null);
    }

    /**
     * {@code homa-2clients}: each client is two sockets (one event loop each), its calls spread
     * round-robin over them, against one server socket. Compare runs it in the throughput
     * scenarios only: what a second client socket adds, where {@code homa-2loops} adds a second
     * engine to every socket.
     */
    public static HomaTransport twoClientSockets() {
        return new HomaTransport(Transports.HOMA_2CLIENTS, HomaConfig.IoTransport.AUTO, 1, null, false, null, 2);
    }

    /** The same transport with a Micrometer binder on every socket (JFR events stay off). */
    public HomaTransport withMicrometer() {
        return new HomaTransport(name, io, loops, new SimpleMeterRegistry(), secured, cipherProvider, clientSockets);
    }

    private HomaTransport(String name, HomaConfig.IoTransport io, int loops, MeterRegistry registry, boolean secured,
                          java.security.Provider cipherProvider) {
        this(name, io, loops, registry, secured, cipherProvider, 1);
    }

    private HomaTransport(String name, HomaConfig.IoTransport io, int loops, MeterRegistry registry, boolean secured,
                          java.security.Provider cipherProvider, int clientSockets) {
        this.clientSockets = clientSockets;
        this.cipherProvider = cipherProvider;
        this.name = name;
        this.io = io;
        this.loops = loops;
        this.registry = registry;
        this.secured = secured;
        HomaConfig.Builder b = HomaConfig.builder()
                .bindAddress(NettyIo.anyPort())
                .inlineExecution(!"false".equals(System.getProperty("homa.bench.inlineExecution")))
                .ioTransport(io)
                .eventLoops(loops);
        Integer mtu = Integer.getInteger("homa.bench.mtu");
        if (mtu != null) {
            b.mtu(mtu);
        }
        Long linkMbps = Long.getLong("homa.bench.linkMbps");
        if (linkMbps != null) {
            b.linkMbps(linkMbps); // a testbed's emulated link rate (docs/tuning.md)
        }
        Integer unscheduled = Integer.getInteger("homa.bench.unscheduledBytes");
        if (unscheduled != null) {
            b.unscheduledBytes(unscheduled);
        }
        Integer maxIncoming = Integer.getInteger("homa.bench.maxIncoming");
        if (maxIncoming != null) {
            b.maxIncoming(maxIncoming);
        }
        Integer receiveBatch = Integer.getInteger("homa.bench.receiveBatch");
        if (receiveBatch != null) {
            b.receiveBatch(receiveBatch);
        }
        Integer nicQueueMicros = Integer.getInteger("homa.bench.maxNicQueueMicros");
        if (nicQueueMicros != null) {
            b.maxNicQueue(java.time.Duration.ofNanos(nicQueueMicros * 1000L));
        }
        Integer lateCreditMicros = Integer.getInteger("homa.bench.pacerLateCreditMicros");
        if (lateCreditMicros != null) {
            b.pacerLateCredit(java.time.Duration.ofNanos(lateCreditMicros * 1000L));
        }
        Integer grantBatch = Integer.getInteger("homa.bench.grantBatchSegments");
        if (grantBatch != null) {
            b.grantBatchSegments(grantBatch);
        }
        String pacer = System.getProperty("homa.bench.pacer");
        if (pacer != null) {
            b.pacerEnabled(Boolean.parseBoolean(pacer));
        }
        if (Boolean.getBoolean("homa.bench.busyPoll")) {
            b.busyPoll(true);
        }
        Integer tickMicros = Integer.getInteger("homa.bench.tickMicros");
        if (tickMicros != null) {
            b.tick(java.time.Duration.ofNanos(tickMicros * 1000L));
        }
        Integer callerSpinMicros = Integer.getInteger("homa.bench.callerSpinMicros");
        if (callerSpinMicros != null) {
            b.callerSpin(java.time.Duration.ofNanos(callerSpinMicros * 1000L));
        }
        String callerSends = System.getProperty("homa.bench.callerSends");
        if (callerSends != null) {
            b.callerSends(Boolean.parseBoolean(callerSends));
        }
        String callerReads = System.getProperty("homa.bench.callerReads");
        if (callerReads != null) {
            b.callerReads(Boolean.parseBoolean(callerReads));
        }
        // homa.bench.zeroCopySend=true|false overrides HomaConfig.zeroCopySend (docs/benchmarks.md).
        String zeroCopySend = System.getProperty("homa.bench.zeroCopySend");
        if (zeroCopySend != null) {
            b.zeroCopySend(Boolean.parseBoolean(zeroCopySend));
        }
        if (secured) {
            HomaSecurity security = HomaSecurity.preSharedKeys(HomaKeyRing.of(HomaKeyRing.Cipher.AES_GCM_128, BENCH_KEY));
            b.security(cipherProvider == null ? security : security.cipherProvider(cipherProvider));
        }
        this.config = b.build();
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public boolean throughputOnly() {
        return loops > 1 || clientSockets > 1;
    }

    /** Variants on the same Netty transport run the same code: one JIT warm-up serves them. */
    @Override
    public String warmUpGroup() {
        return Transports.HOMA + "/" + io + (secured ? "/psp" : "") + (cipherProvider != null ? "/" + cipherProvider.getName() : "");
    }

    /** The Netty transport a socket of this configuration runs on here (io_uring, epoll or nio). */
    public String ioTransportInUse() {
        try (HomaSocket s = HomaSocket.open(config)) {
            return s.metrics().transport();
        }
    }

    @Override
    public int maxMessageLength() {
        return config.maxMessageLength();
    }

    /** The configuration every socket of this transport uses. */
    public HomaConfig config() {
        return config;
    }

    @Override
    public EchoServer startServer() {
        return startServer(0);
    }

    @Override
    public EchoServer startServer(int port) {
        HomaSocket socket = HomaSocket.open(port == 0 ? config
                : config.toBuilder().bindAddress(new InetSocketAddress(NettyIo.HOST, port)).build());
        try {
            // Zero-copy echo: the request's own bytes go back (one copy only when it arrived in
            // several chunks, as toByteArray would make).
            socket.serve(request -> request.reply(request.payload()));
        } catch (RuntimeException e) {
            socket.close();
            throw e;
        }
        return new Server(socket, bind(socket, "server"));
    }

    /**
     * An echo server on {@link NettyIo#HOST} and {@code port} whose socket is also the client of
     * every other server ({@link SharedSocket#clientTo}): one Homa socket reaches every peer, so a
     * process that both serves and calls needs one, as a user would have it.
     */
    public SharedSocket startSharedServer(int port) {
        Server server = (Server) startServer(port);
        return new SharedSocket(server);
    }

    /** An echo server whose socket also calls other servers ({@link #clientTo}); closing it closes the socket. */
    public static final class SharedSocket implements EchoServer {
        private final Server server;

        private SharedSocket(Server server) {
            this.server = server;
        }

        /** A client of {@code peer} through this server's own socket; closing the client closes nothing. */
        public EchoClient clientTo(InetSocketAddress peer) {
            HomaSocket socket = server.socket;
            return new EchoClient() {
                @Override
                public CompletableFuture<byte[]> call(byte[] request) {
                    return checkedCall(socket, peer, request);
                }

                @Override
                public void close() {
                    // the socket is the server's
                }
            };
        }

        @Override
        public InetSocketAddress address() {
            return server.address();
        }

        @Override
        public void close() {
            server.close();
        }
    }

    @Override
    public EchoClient connect(InetSocketAddress server) {
        HomaSocket[] sockets = new HomaSocket[clientSockets];
        AutoCloseable[] binders = new AutoCloseable[clientSockets];
        try {
            for (int i = 0; i < clientSockets; i++) {
                sockets[i] = HomaSocket.open(config);
                binders[i] = bind(sockets[i], "client");
            }
        } catch (RuntimeException e) {
            for (HomaSocket s : sockets) {
                if (s != null) {
                    s.close();
                }
            }
            throw e;
        }
        return new Client(sockets, server, binders);
    }

    /** Attaches a binder to {@code socket} if this transport has a registry; what stops it (or a no-op). */
    private AutoCloseable bind(HomaSocket socket, String side) {
        if (registry == null) {
            return () -> { };
        }
        HomaMetricsBinder binder = new HomaMetricsBinder(socket,
                Tags.of("side", side, "port", Integer.toString(socket.localAddress().getPort())));
        binder.bindTo(registry);
        return binder;
    }

    /**
     * With {@code -Dhoma.bench.printMetrics=true} (through {@code JAVA_TOOL_OPTIONS} to reach the
     * server JVM too), a socket's metrics on stderr as it closes: how its datagrams shared system
     * calls ({@code send_calls} against {@code datagrams_sent}) and how many calls were caller turns.
     */
    private static void printMetrics(String side, HomaSocket socket) {
        if (Boolean.getBoolean("homa.bench.printMetrics")) {
            System.err.println("homa " + side + " metrics: " + socket.metrics());
        }
    }

    /** {@link EchoClient#call}'s contract on one socket: a request longer than Homa allows is refused here. */
    private static CompletableFuture<byte[]> checkedCall(HomaSocket socket, InetSocketAddress to, byte[] request) {
        if (request.length > socket.config().maxMessageLength()) {
            throw new IllegalArgumentException("request of " + request.length + " bytes exceeds Homa's maxMessageLength "
                    + socket.config().maxMessageLength());
        }
        return socket.call(to, request);
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String toString() {
        return name();
    }

    private static final class Server implements EchoServer {
        private final HomaSocket socket;
        private final InetSocketAddress address;
        private final AutoCloseable binder;

        Server(HomaSocket socket, AutoCloseable binder) {
            this.socket = socket;
            this.address = socket.localAddress();
            this.binder = binder;
        }

        @Override
        public InetSocketAddress address() {
            return address;
        }

        @Override
        public void close() {
            printMetrics("server", socket);
            closeQuietly(binder);
            socket.close();
        }
    }

    private static final class Client implements EchoClient {
        private final HomaSocket[] sockets;
        private final InetSocketAddress server;
        private final AtomicBoolean closed = new AtomicBoolean();
        private final AutoCloseable[] binders;
        private final java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();

        Client(HomaSocket[] sockets, InetSocketAddress server, AutoCloseable[] binders) {
            this.sockets = sockets;
            this.server = server;
            this.binders = binders;
        }

        @Override
        public CompletableFuture<byte[]> call(byte[] request) {
            HomaSocket socket = sockets.length == 1 ? sockets[0] : sockets[Math.floorMod(next.getAndIncrement(), sockets.length)];
            return checkedCall(socket, server, request);
        }

        @Override
        public void close() {
            if (closed.compareAndSet(false, true)) {
                for (int i = 0; i < sockets.length; i++) {
                    printMetrics("client", sockets[i]);
                    closeQuietly(binders[i]);
                    sockets[i].close();
                }
            }
        }
    }
}
