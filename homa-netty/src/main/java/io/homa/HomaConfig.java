package io.homa;

import io.homa.core.EngineConfig;
import io.homa.core.sim.FaultModel;
import io.homa.core.psp.PspFormat;
import io.homa.core.wire.WireFormat;
import io.homa.internal.DerivedProtocol;
import io.homa.internal.ShellAccess;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.Executor;

/**
 * Everything a {@link HomaSocket} can be told, immutable. {@link #defaults()} is right for most
 * uses; {@link #builder()} changes what you need and {@link Builder#build()} validates it (a bad
 * value throws {@link HomaBadArgumentException} naming it).
 *
 * <p>Three groups of settings:
 * <ul>
 *   <li><b>The protocol</b>: MTU, message size limit, unscheduled bytes, grants, priorities, pacer,
 *       timers and limits, one builder method each (docs/tuning.md explains every one). The
 *       socket hands them to its engines; the values the build derived (MTU, unscheduled bytes,
 *       grant budget) can be
 *       read back with {@link #mtu()}, {@link #unscheduledBytes()}, {@link #maxIncoming()}.</li>
 *   <li><b>The API</b>: the default call deadline, the server's request timeout, and where user
 *       code runs (a separate executor by default; on the event loop with
 *       {@link Builder#inlineExecution(boolean)}).</li>
 *   <li><b>The I/O shell</b>: Netty's transport (epoll, io_uring, NIO), event loops, priority
 *       sockets and their TOS, receive batching, GSO, GRO, busy polling and socket buffers; and
 *       the TCP fallback ({@link Builder#tcpFallback}).</li>
 * </ul>
 * Fault injection for tests is not part of this API: see package {@code io.homa.testing}.
 */
public final class HomaConfig {
    /** The deadline of a call that names none: 30 seconds. */
    public static final Duration DEFAULT_DEADLINE = Duration.ofSeconds(30);
    /** How long a server waits for a handler's reply before it drops the request: 30 seconds. */
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(30);
    /**
     * Requests waiting for a handler thread, per socket, by default: 10,000. A request beyond it is
     * refused at once and its caller fails with {@link HomaOverloadedException}.
     */
    public static final int DEFAULT_MAX_QUEUED_REQUESTS = 10_000;
    /**
     * The longest a request waits for a handler thread while the server is overloaded, at least:
     * 5 ms (raised to the handlers' mean time). See {@link Builder#queueTarget}.
     */
    public static final Duration DEFAULT_QUEUE_TARGET = Duration.ofMillis(5);
    /**
     * How long the handler queue must stay non-empty before the server counts as overloaded, at
     * least: 100 ms (raised to four times the handlers' mean time). See {@link Builder#queueInterval}.
     */
    public static final Duration DEFAULT_QUEUE_INTERVAL = Duration.ofMillis(100);
    /**
     * Calls per server one engine runs at once by default: 200 (more wait in the socket, under
     * their deadlines). Calls in flight to a server that cannot keep up wait in its socket's
     * receive queue, which a busy JVM reads at some thousands of datagrams a second: with 1,000
     * per client socket, 8 client sockets flooding a slow server kept 4.5-7.1 MB of requests
     * there for 2-3 s; requests waited unseen (the server served less), and whole client windows
     * heard nothing for the 1 s silence timeout ({@link #DEFAULT_TIMEOUT_TICKS}) and failed
     * (docs/security.md, "A slow application").
     * Far fewer (50 for 8 sockets) let too few calls reach the server for it to refuse the ones it
     * cannot serve in time: thousands timed out instead, at the client or sent too late.
     */
    public static final int DEFAULT_MAX_CALLS_PER_SERVER = 200;
    /**
     * Silent ticks before an RPC fails, by default: 1000 (1 s at the 1 ms tick), where Linux Homa
     * and the engine's own defaults use 100. A JVM on a busy machine stalls for tens of
     * milliseconds at times (garbage collection, compilation, CPU contention), which a kernel does
     * not; 100 ms then fails healthy RPCs.
     */
    public static final int DEFAULT_TIMEOUT_TICKS = 1000;
    /**
     * Times a request is sent again after the server said it does not know it, by default: 100
     * (the engine's default is 10). A restart comes every few ticks, so 10 of them end an RPC in
     * about 60 ms when an overloaded server drops requests; 100 matches the 1 s silence timeout.
     */
    public static final int DEFAULT_MAX_RESTARTS = 100;
    /** The grant budget used with a large MTU (loopback) unless one is chosen: 2,400,000 bytes. */
    public static final int LARGE_MTU_MAX_INCOMING = 2_400_000;
    /**
     * With {@link Builder#tcpFallback(boolean)}: how long a call waits for any Homa packet from its
     * server before it is retried over TCP, by default: 250 ms. A live server answers within a few
     * ticks (a response, a GRANT, or a BUSY to the client's RESEND), even when its handler is slow.
     */
    public static final Duration DEFAULT_PROBE_INTERVAL = Duration.ofMillis(250);
    /** How long a peer that had to be reached over TCP stays on TCP before Homa is probed again: 30 s. */
    public static final Duration DEFAULT_FALLBACK_PERIOD = Duration.ofSeconds(30);
    /** TCP connections one socket keeps at most to one fallback peer, by default: 2. */
    public static final int DEFAULT_TCP_CONNECTIONS_PER_PEER = 2;
    /** How long an unused fallback TCP connection stays open, by default: 60 s. */
    public static final Duration DEFAULT_TCP_IDLE_TIMEOUT = Duration.ofSeconds(60);

    /**
     * The system property that tells {@link IoTransport#AUTO} which transport to prefer:
     * {@code io_uring}, {@code epoll} or {@code nio} (any case), e.g.
     * {@code -Dio.homa.ioTransport=io_uring}; to compare transports without changing code. A
     * configuration that names a transport keeps it; an unknown value is logged and ignored.
     */
    public static final String IO_TRANSPORT_PROPERTY = "io.homa.ioTransport";

    /**
     * Which of Netty's transports moves the datagrams ({@link Builder#ioTransport}). All three
     * carry the same protocol; they differ in cost per datagram and in the kernel features they
     * reach (docs/netty.md compares them).
     */
    public enum IoTransport {
        /**
         * The one {@link #IO_TRANSPORT_PROPERTY} names, else the one that measured best
         * (docs/netty.md), falling back as below.
         */
        AUTO,
        /** Linux io_uring; else epoll; else NIO. No UDP GRO on it (the setting is ignored). */
        IO_URING,
        /** Linux epoll; else io_uring; else NIO. */
        EPOLL,
        /** The JDK's NIO selector: everywhere, no GSO, GRO nor receive batching. */
        NIO
    }

    /** Linux Homa's mapping of a priority level to the IP TOS byte: {@code level << 5}. */
    private static final int[] LINUX_TOS = {0x00, 0x20, 0x40, 0x60, 0x80, 0xa0, 0xc0, 0xe0};

    static {
        // io.homa.testing sets the fault injector through this hook (it is no public method here).
        ShellAccess.setFaultInjection((builder, seed, data, control) ->
                ((Builder) builder).faultInjection(seed, data, control));
    }

    /**
     * Default of {@link #callerSpin()} without busy polling: none. On this project's 2-core test
     * machine a spin shorter than the round trip only burns CPU, and a caller that sleeps on the
     * socket itself ({@link #callerReads()}) already saves the loop's wake-up and its own unpark
     * (docs/benchmarks.md, "The latency floor").
     */
    public static final Duration DEFAULT_CALLER_SPIN = Duration.ZERO;
    /**
     * Default of {@link #callerSpin()} with {@link Builder#busyPoll(boolean) busy polling} and one
     * event loop: 1 ms. A busy-polling socket has cores to spend; a waiting caller that spins on
     * the socket as its reader (while its loop sleeps) answers sooner and costs less CPU per call
     * than one woken by the spinning loop (docs/benchmarks.md, "The latency floor"). With several
     * loops a caller cannot be the reader, and its spin measured a far longer tail: none there.
     */
    public static final Duration DEFAULT_BUSY_POLL_CALLER_SPIN = Duration.ofMillis(1);
    // After the defaults above: building DEFAULTS reads them.
    private static final HomaConfig DEFAULTS = builder().build();

    private final InetSocketAddress bindAddress;
    /** Default of {@link #zeroCopySend()}: see docs/benchmarks.md for the measurement that chose it. */
    public static final boolean DEFAULT_ZERO_COPY_SEND = true;
    private final EngineConfig protocol;
    private final Duration defaultDeadline;
    private final boolean idempotentCalls;
    private final Duration requestTimeout;
    private final int eventLoops;
    private final int maxCallsPerServer;
    private final int maxQueuedRequests;
    private final Duration queueTarget;
    private final Duration queueInterval;
    private final Executor executor;
    private final int executorThreads;
    private final boolean inlineExecution;
    private final boolean prioritySockets;
    private final int[] tosByLevel;
    private final int receiveBatch;
    private final boolean gso;
    private final boolean gro;
    private final boolean busyPoll;
    private final boolean callerSends;
    private final Duration callerSpin;
    private final boolean callerReads;
    private final boolean nativeTransport;
    private final IoTransport ioTransport;
    private final int receiveBufferBytes;
    private final int sendBufferBytes;
    private final long faultSeed;
    private final FaultModel dataFaults;
    private final FaultModel controlFaults;
    private final boolean tcpFallback;
    private final Duration probeInterval;
    private final Duration fallbackPeriod;
    private final int tcpConnectionsPerPeer;
    private final Duration tcpIdleTimeout;
    private final HomaSecurity security;
    /** Whether the pacer was switched on or off by the user (else derived: see {@link Builder#pacerEnabled}). */
    private final boolean pacerChosen;

    private HomaConfig(Builder b, EngineConfig protocol) {
        this.bindAddress = b.bindAddress;
        this.protocol = protocol;
        this.defaultDeadline = b.defaultDeadline;
        this.idempotentCalls = b.idempotentCalls;
        this.requestTimeout = b.requestTimeout;
        this.eventLoops = b.eventLoops;
        this.maxCallsPerServer = b.maxCallsPerServer;
        this.maxQueuedRequests = b.maxQueuedRequests;
        this.queueTarget = b.queueTarget;
        this.queueInterval = b.queueInterval;
        this.executor = b.executor;
        this.executorThreads = b.executorThreads;
        this.inlineExecution = b.inlineExecution;
        this.prioritySockets = b.prioritySockets;
        this.tosByLevel = b.tosByLevel.clone();
        this.receiveBatch = b.receiveBatch;
        this.gso = b.gso;
        this.gro = b.gro;
        this.busyPoll = b.busyPoll;
        this.callerSends = b.callerSends;
        this.callerSpin = b.callerSpin;
        this.callerReads = b.callerReads;
        this.nativeTransport = b.nativeTransport;
        this.ioTransport = b.ioTransport;
        this.receiveBufferBytes = b.receiveBufferBytes;
        this.sendBufferBytes = b.sendBufferBytes;
        this.faultSeed = b.faultSeed;
        this.dataFaults = b.dataFaults;
        this.controlFaults = b.controlFaults;
        this.tcpFallback = b.tcpFallback;
        this.probeInterval = b.probeInterval;
        this.fallbackPeriod = b.fallbackPeriod;
        this.tcpConnectionsPerPeer = b.tcpConnectionsPerPeer;
        this.tcpIdleTimeout = b.tcpIdleTimeout;
        this.security = b.security;
        this.pacerChosen = b.pacerChosen;
    }

    /**
     * The default configuration: bind {@code 0.0.0.0:0}, MTU 1500, the engine's protocol defaults
     * (Linux Homa's) except {@link #DEFAULT_TIMEOUT_TICKS}, {@link #DEFAULT_MAX_RESTARTS}, the
     * grant budget ({@link Builder#maxIncoming}: 0.5 ms of the link) and the pacer (off until the
     * link is described: {@link Builder#pacerEnabled}), and the I/O defaults documented on each
     * builder method.
     */
    public static HomaConfig defaults() {
        return DEFAULTS;
    }

    /** A builder holding the defaults; {@link Builder#build()} validates what was changed. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A builder holding this configuration's values. The protocol settings that were derived
     * (MTU, unscheduled bytes, grant budget) come as if chosen: changing {@link Builder#linkMbps}
     * or {@link Builder#bindAddress} on it does not derive them again; start from
     * {@link #builder()} for that. The pacer is the exception: one that is off only because no
     * link was described is derived again, so setting {@link Builder#linkMbps} turns it on.
     */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.bindAddress = bindAddress;
        // A secured config's protocol counts the PSP overhead in ipUdpOverhead; build() adds it again.
        b.protocol = security == null ? protocol.toBuilder()
                : protocol.toBuilder().ipUdpOverhead(protocol.ipUdpOverhead - PspFormat.OVERHEAD);
        b.security = security;
        b.mtuChosen = true; // already resolved for this config's bind address
        b.budgetChosen = true;
        b.unscheduledChosen = true;
        // A pacer that runs stays on; one off only for want of a link rate is derived again, so
        // that toBuilder().linkMbps(...) turns it on as builder().linkMbps(...) does.
        b.pacerChosen = pacerChosen || protocol.pacerEnabled;
        b.defaultDeadline = defaultDeadline;
        b.idempotentCalls = idempotentCalls;
        b.requestTimeout = requestTimeout;
        b.eventLoops = eventLoops;
        b.maxCallsPerServer = maxCallsPerServer;
        b.maxQueuedRequests = maxQueuedRequests;
        b.queueTarget = queueTarget;
        b.queueInterval = queueInterval;
        b.executor = executor;
        b.executorThreads = executorThreads;
        b.inlineExecution = inlineExecution;
        b.prioritySockets = prioritySockets;
        b.tosByLevel = tosByLevel.clone();
        b.receiveBatch = receiveBatch;
        b.gso = gso;
        b.gro = gro;
        b.busyPoll = busyPoll;
        b.callerSends = callerSends;
        b.callerSpin = callerSpin;
        b.callerReads = callerReads;
        b.nativeTransport = nativeTransport;
        b.ioTransport = ioTransport;
        b.receiveBufferBytes = receiveBufferBytes;
        b.sendBufferBytes = sendBufferBytes;
        b.faultSeed = faultSeed;
        b.dataFaults = dataFaults;
        b.controlFaults = controlFaults;
        b.tcpFallback = tcpFallback;
        b.probeInterval = probeInterval;
        b.fallbackPeriod = fallbackPeriod;
        b.tcpConnectionsPerPeer = tcpConnectionsPerPeer;
        b.tcpIdleTimeout = tcpIdleTimeout;
        return b;
    }

    // ---------------------------------------- where to bind, and the protocol (docs/tuning.md)

    /** Local address and port to bind; port 0 picks a free one. Default {@code 0.0.0.0:0}. */
    public InetSocketAddress bindAddress() { return bindAddress; }

    /** The protocol settings every engine of the socket starts from (the shell adds its id shard). */
    EngineConfig engineConfig() { return protocol; }

    /** Largest request or response, in bytes (default 64 MiB). */
    public int maxMessageLength() { return protocol.maxMessageLength; }

    /** The MTU the packets are sized for: the one given, else the bind interface's (see {@link Builder#mtu}). */
    public int mtu() { return protocol.mtu; }

    /** Bytes of each message sent before any grant, as built (see {@link Builder#linkMbps}). */
    public int unscheduledBytes() { return protocol.unscheduledBytes; }

    /** The receiver's grant budget in bytes, as built (see {@link Builder#mtu} and {@link Builder#linkMbps}). */
    public int maxIncoming() { return protocol.maxIncoming; }

    /** The link rate the pacer assumes, Mbit/s. */
    public long linkMbps() { return protocol.linkMbps; }

    // ---------------------------------------- the API: deadlines, admission, where user code runs

    /** Deadline of a call that names none (default {@link #DEFAULT_DEADLINE}). */
    public Duration defaultDeadline() { return defaultDeadline; }

    /**
     * Whether every call of this socket is idempotent (default false): see
     * {@link Builder#idempotentCalls(boolean)} and {@link CallOptions#withIdempotent(boolean)}.
     */
    public boolean idempotentCalls() { return idempotentCalls; }

    /**
     * How long a server keeps a request its handler has not answered; then the request is dropped
     * (the client fails with {@link HomaUnknownRpcException} or its own deadline) and a later
     * reply is ignored. Default {@link #DEFAULT_REQUEST_TIMEOUT}.
     */
    public Duration requestTimeout() { return requestTimeout; }

    /** Event loops, each with its own engine, sharing the socket's port (default 1). */
    public int eventLoops() { return eventLoops; }

    /**
     * Most calls to one server that one engine runs at once (0: no limit); later calls wait in
     * the socket, in order, under their deadlines. Default {@link #DEFAULT_MAX_CALLS_PER_SERVER}.
     */
    public int maxCallsPerServer() { return maxCallsPerServer; }

    /**
     * Most requests of this socket waiting for their handler to start (received, not yet run).
     * A request beyond it is refused without running the handler: its caller fails quickly with
     * {@link HomaOverloadedException}. Default {@link #DEFAULT_MAX_QUEUED_REQUESTS}.
     */
    public int maxQueuedRequests() { return maxQueuedRequests; }

    /** The floor of the longest wait for a handler under overload (see {@link Builder#queueTarget}). */
    public Duration queueTarget() { return queueTarget; }

    /** The floor of how long the queue stays non-empty before it counts as overload (see {@link Builder#queueInterval}). */
    public Duration queueInterval() { return queueInterval; }

    /** The executor for handlers and completions, or {@code null}: the socket makes its own pool. */
    public Executor executor() { return executor; }

    /** Threads of the socket's own executor (when {@link #executor()} is null). */
    public int executorThreads() { return executorThreads; }

    /** Whether handlers and completions run on the event loop itself (see the builder). */
    public boolean inlineExecution() { return inlineExecution; }

    // ---------------------------------------- the I/O shell: sockets, batching, GSO/GRO, transports

    /** Whether each priority level sends from its own socket with its own IP TOS (default true). */
    public boolean prioritySockets() { return prioritySockets; }

    /** The IP TOS byte used for priority {@code level} (0..7) when {@link #prioritySockets()}. */
    public int tos(int level) { return tosByLevel[level]; }

    /**
     * Datagrams read per system call (epoll: recvmmsg; io_uring: receives submitted together);
     * 1 turns batching off (default 32).
     */
    public int receiveBatch() { return receiveBatch; }

    /** Whether runs of equal-size segments leave in one UDP GSO send where supported (default true). */
    public boolean gso() { return gso; }

    /**
     * Whether a direct {@code ByteBuf} payload of 1 KiB or more is sent in place, as header plus
     * retained slices of the caller's buffer, rather than copied into the send buffer, where
     * datagrams carry 16 KiB of payload or more (an MTU above about 16.5 KB, as on loopback;
     * at smaller datagrams the slices cost more than the copy) and the transport is epoll (default {@value #DEFAULT_ZERO_COPY_SEND}). A
     * {@code byte[]} or heap payload is copied once either way: the kernel reads only native memory.
     */
    public boolean zeroCopySend() { return protocol.sendPayloadByReference; }

    /** Whether the kernel may coalesce received segments (UDP GRO) where supported (default true). */
    public boolean gro() { return gro; }

    /** Whether event loops spin instead of sleeping (lowest latency, one busy core per loop; default false). */
    public boolean busyPoll() { return busyPoll; }

    /**
     * Whether a thread that calls or replies sends its own datagrams when the event loop is idle,
     * instead of waking the loop (default true; see {@link Builder#callerSends(boolean)}).
     */
    public boolean callerSends() { return callerSends; }

    /** How long a thread waiting for a call's future reads the socket itself (see {@link Builder#callerSpin(Duration)}). */
    public Duration callerSpin() {
        return callerSpin != null ? callerSpin : busyPoll && eventLoops == 1 ? DEFAULT_BUSY_POLL_CALLER_SPIN : DEFAULT_CALLER_SPIN;
    }

    /**
     * Whether a thread blocked on a call's future waits for the response on the socket itself, in
     * the event loop's stead (default true; see {@link Builder#callerReads(boolean)}).
     */
    public boolean callerReads() { return callerReads; }

    /** Whether a native transport (epoll, io_uring) is used when available (default true); false forces NIO. */
    public boolean nativeTransport() { return nativeTransport; }

    /** Which of Netty's transports the socket prefers (default {@link IoTransport#AUTO}); see the builder. */
    public IoTransport ioTransport() { return ioTransport; }

    /** SO_RCVBUF of each socket, bytes (default 4 MiB; the kernel caps it at net.core.rmem_max). */
    public int receiveBufferBytes() { return receiveBufferBytes; }

    /** SO_SNDBUF of each socket, bytes (default 4 MiB; the kernel caps it at net.core.wmem_max). */
    public int sendBufferBytes() { return sendBufferBytes; }

    // ---------------------------------------- the TCP fallback (docs/deployment.md)

    /**
     * Whether the socket also serves over TCP on its port number and retries over TCP the calls
     * to a peer that Homa cannot reach (see {@link Builder#tcpFallback(boolean)}; default false).
     */
    public boolean tcpFallback() { return tcpFallback; }

    /** How long a call waits for any Homa packet from its server before its TCP retry (with {@link #tcpFallback()}). */
    public Duration probeInterval() { return probeInterval; }

    /** How long a peer reached over TCP stays on TCP before Homa is tried again (with {@link #tcpFallback()}). */
    public Duration fallbackPeriod() { return fallbackPeriod; }

    /** Most TCP connections to one fallback peer (with {@link #tcpFallback()}). */
    public int tcpConnectionsPerPeer() { return tcpConnectionsPerPeer; }

    /** How long an unused fallback TCP connection stays open (with {@link #tcpFallback()}). */
    public Duration tcpIdleTimeout() { return tcpIdleTimeout; }

    /** Encryption and authentication of every datagram ({@link Builder#security}); null when off (the default). */
    public HomaSecurity security() { return security; }

    // ---------------------------------------- fault injection (io.homa.testing)

    /** Whether the fault injector of {@code io.homa.testing} is on. */
    boolean faultInjection() { return !dataFaults.isNone() || !controlFaults.isNone(); }

    /** Seed of the fault injector. */
    long faultSeed() { return faultSeed; }

    /** Faults applied to outgoing DATA datagrams. */
    FaultModel dataFaults() { return dataFaults; }

    /** Faults applied to outgoing control datagrams (everything but DATA). */
    FaultModel controlFaults() { return controlFaults; }

    @Override
    public String toString() {
        return "HomaConfig{bind=" + bindAddress + ", " + protocol + ", deadline=" + defaultDeadline + (idempotentCalls ? ", idempotent" : "")
                + ", requestTimeout=" + requestTimeout + ", eventLoops=" + eventLoops
                + ", maxCallsPerServer=" + maxCallsPerServer + ", maxQueuedRequests=" + maxQueuedRequests
                + ", queue(target=" + queueTarget + ", interval=" + queueInterval + ")" + ", inline=" + inlineExecution + ", prioritySockets=" + prioritySockets
                + ", tos=" + Arrays.toString(tosByLevel) + ", receiveBatch=" + receiveBatch
                + ", gso=" + gso + ", gro=" + gro + ", busyPoll=" + busyPoll + ", callerSends=" + callerSends + ", callerSpin=" + callerSpin() + ", callerReads=" + callerReads + ", native=" + nativeTransport
                + ", ioTransport=" + ioTransport
                + (tcpFallback ? ", tcpFallback(probe=" + probeInterval + ", period=" + fallbackPeriod
                        + ", connections=" + tcpConnectionsPerPeer + ", idle=" + tcpIdleTimeout + ")" : "")
                + (security != null ? ", " + security : "")
                + (faultInjection() ? ", faults(seed=" + faultSeed + ", data=" + dataFaults
                        + ", control=" + controlFaults + ")" : "") + "}";
    }

    /** Builder of {@link HomaConfig}. Not thread-safe; {@link #build()} validates and copies. */
    public static final class Builder {
        private InetSocketAddress bindAddress = new InetSocketAddress("0.0.0.0", 0);
        private EngineConfig.Builder protocol = EngineConfig.builder()
                .timeoutTicks(DEFAULT_TIMEOUT_TICKS).maxRestarts(DEFAULT_MAX_RESTARTS)
                .sendPayloadByReference(DEFAULT_ZERO_COPY_SEND);
        private Duration defaultDeadline = DEFAULT_DEADLINE;
        private boolean idempotentCalls;
        private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
        private int eventLoops = 1;
        private int maxCallsPerServer = DEFAULT_MAX_CALLS_PER_SERVER;
        private int maxQueuedRequests = DEFAULT_MAX_QUEUED_REQUESTS;
        private Duration queueTarget = DEFAULT_QUEUE_TARGET;
        private Duration queueInterval = DEFAULT_QUEUE_INTERVAL;
        private Executor executor;
        private int executorThreads = Math.max(2, Runtime.getRuntime().availableProcessors());
        private boolean inlineExecution;
        private boolean prioritySockets = true;
        private int[] tosByLevel = LINUX_TOS.clone();
        private int receiveBatch = 32;
        private boolean gso = true;
        private boolean gro = true;
        private boolean busyPoll;
        private boolean callerSends = true;
        /** Null: the default for the busy-polling choice ({@link HomaConfig#callerSpin()}). */
        private Duration callerSpin;
        private boolean callerReads = true;
        private boolean nativeTransport = true;
        private IoTransport ioTransport = IoTransport.AUTO;
        private int receiveBufferBytes = 4 << 20;
        private int sendBufferBytes = 4 << 20;
        private long faultSeed;
        private FaultModel dataFaults = FaultModel.NONE;
        private FaultModel controlFaults = FaultModel.NONE;
        private boolean tcpFallback;
        private Duration probeInterval = DEFAULT_PROBE_INTERVAL;
        private Duration fallbackPeriod = DEFAULT_FALLBACK_PERIOD;
        private int tcpConnectionsPerPeer = DEFAULT_TCP_CONNECTIONS_PER_PEER;
        private Duration tcpIdleTimeout = DEFAULT_TCP_IDLE_TIMEOUT;
        private HomaSecurity security;

        /** Whether the MTU was set explicitly (or comes from a built config). */
        private boolean mtuChosen;
        /** Whether maxIncoming was set explicitly (or comes from a built config). */
        private boolean budgetChosen;
        /** Whether unscheduledBytes was set explicitly (or comes from a built config). */
        private boolean unscheduledChosen;
        /** Whether maxNicQueue was set explicitly. */
        private boolean nicQueueChosen;
        /** Whether linkMbps was set with {@link #linkMbps}. */
        private boolean linkChosen;
        /** Whether pacerEnabled was set explicitly (or comes from a built config). */
        private boolean pacerChosen;

        private Builder() {
        }

        // ---------------------------------------- where to bind, and the protocol (docs/tuning.md)

        /** Local address and port; port 0 picks a free port (see {@link HomaSocket#localAddress()}). */
        public Builder bindAddress(InetSocketAddress v) { this.bindAddress = v; return this; }

        /**
         * Largest IP datagram on the path. By default it follows the MTU of the interface of the
         * bind address, read when the config is built: 65,535 (the UDP limit) on loopback, the
         * interface's MTU (e.g. 1,500 on Ethernet) for a specific address, and 1,500 for the
         * wildcard address (the path is unknown). Every peer must use the same value or a smaller
         * one. With an MTU above 9,000 (chosen or derived) and no {@link #maxIncoming} of your own,
         * the grant budget is {@link #LARGE_MTU_MAX_INCOMING} so that several 64 KB segments fit a window.
         */
        public Builder mtu(int v) { protocol.mtu(v); mtuChosen = true; return this; }
        /** Largest request or response in bytes (default 64 MiB). */
        public Builder maxMessageLength(int v) { protocol.maxMessageLength(v); return this; }
        /**
         * Bytes of each message sent before any grant. Default: on a link of the default rate or
         * faster, what the link carries in 80 us (250,000 bytes at 25 Gbit/s), at most a quarter of
         * the grant budget ({@link #maxIncoming}): a round trip to the first grant through two
         * user-space hosts (the engine's own default, Linux Homa's, is 40,000: a kernel's round trip);
         * on a slower link see {@link #linkMbps}. A receiver announces what it accepts, and a sender
         * sends it no more than that once it has heard it (a first message to a peer goes by the
         * sender's own setting).
         */
        public Builder unscheduledBytes(int v) { protocol.unscheduledBytes(v); unscheduledChosen = true; return this; }
        /**
         * Receiver: bytes granted but not yet received, over all messages. By default it covers a
         * grant's turnaround through two user-space hosts, 0.5 ms of the link: 1,562,500 bytes at
         * the default 25 Gbit/s and an MTU of up to 9,000 (at least Linux Homa's 400,000, at most
         * {@link #LARGE_MTU_MAX_INCOMING}); {@link #LARGE_MTU_MAX_INCOMING} above that MTU; on a
         * link slower than the default, see {@link #linkMbps}. On hosts whose turnaround is a kernel's (tens of
         * microseconds), 400,000 keeps switch queues shorter. The receiver's socket buffer
         * ({@link #receiveBufferBytes}, capped by {@code net.core.rmem_max}) should hold it.
         */
        public Builder maxIncoming(int v) { protocol.maxIncoming(v); budgetChosen = true; return this; }
        /** Receiver: messages granted at once (default 8). */
        public Builder maxOvercommit(int v) { protocol.maxOvercommit(v); return this; }
        /** Unscheduled priority cutoffs, index = level (default Linux Homa's). */
        public Builder unscheduledCutoffs(int... v) { protocol.unscheduledCutoffs(v); return this; }
        /**
         * Link rate, Mbit/s (default 25,000): the pacer's rate and the timer traffic's share. On a
         * link slower than the default, what you do not set yourself is derived from it:
         * <ul>
         * <li>the unscheduled bytes are the engine's 40,000 (a kernel's round trip at the default
         *     rate) scaled in proportion, to no less than one segment: otherwise a 10 Mbit/s link would take 40,000 bytes of every message
         *     unannounced (32 ms of queue at the receiver's switch port, in front of short messages);</li>
         * <li>the grant budget ({@link #maxIncoming}) becomes 5 ms of the link, at least ten segments
         *     and at most 400,000 bytes or 0.5 ms of the link, whichever is more (625,000 bytes at
         *     10 Gbit/s): it must cover a grant's round trip through two
         *     user-space hosts that wake late, with room for batched grants (62,500 bytes at 100
         *     Mbit/s); scheduled bytes queue at low priorities, behind short messages;</li>
         * <li>the pacer's NIC queue allowance ({@link #maxNicQueue}) grows to 0.5 ms, the lateness of
         *     a timer wake-up it must cover.</li>
         * </ul>
         * On a link as fast as the default or faster, at an MTU of 9,000 or less, the grant budget
         * is 0.5 ms of it (see {@link #maxIncoming}). Setting the link rate also turns the pacer on,
         * unless {@link #pacerEnabled} says otherwise: it then knows the rate to pace to.
         */
        public Builder linkMbps(long v) { protocol.linkMbps(v); linkChosen = true; return this; }
        /**
         * Whether the sender's pacer is on. Default: on when you set {@link #linkMbps} or
         * {@link #maxNicQueue}, off otherwise. The pacer holds a long message back while its
         * estimate of the NIC's queue, at {@code linkMbps}, is over {@link #maxNicQueue}, so that a
         * short message never waits behind a long queue; it needs the link's real rate for that, and
         * without it paces to a guess. Where there is no NIC queue to keep short (loopback, a veth
         * pair) or the guess is wrong, its holds only cost: each one cuts a GSO send short and waits
         * for a timer that comes tens of microseconds late (a lone 1 MB echo on a veth pair at MTU 1,500
         * took 1.2-1.6 times as long with it, at 1.4-1.8 times the CPU; docs/benchmarks.md, "The
         * pacer at a guessed rate"). Set {@code linkMbps} to your NIC's rate where short messages share it
         * with bulk sends of this socket (docs/tuning.md).
         */
        public Builder pacerEnabled(boolean v) { protocol.pacerEnabled(v); pacerChosen = true; return this; }
        /** Most segments in one GSO send (default 64; the socket also caps it at 64 KB a send). */
        public Builder maxGsoSegments(int v) { protocol.maxGsoSegments(v); return this; }
        /**
         * Whether a direct {@code ByteBuf} request or reply (of 1 KiB or more, in datagrams of
         * 16 KiB or more, on epoll) is sent in place: each datagram is its
         * header plus a retained slice of the caller's buffer (a composite, gathered by the kernel),
         * so no payload byte is copied (see {@link HomaConfig#zeroCopySend()}).
         */
        public Builder zeroCopySend(boolean v) { protocol.sendPayloadByReference(v); return this; }
        /** The protocol timer's period (default 1 ms). */
        public Builder tick(Duration v) {
            protocol.tickNanos(requirePositive(v, "tick").toNanos());
            return this;
        }
        /** Silent ticks before the receiver asks for missing data (default 5). */
        public Builder resendTicks(int v) { protocol.resendTicks(v); return this; }
        /** Ticks between later RESENDs, at least (default 5). */
        public Builder resendIntervalTicks(int v) { protocol.resendIntervalTicks(v); return this; }
        /** Silent ticks before an RPC fails with a timeout (default {@link #DEFAULT_TIMEOUT_TICKS}). */
        public Builder timeoutTicks(int v) { protocol.timeoutTicks(v); return this; }
        /** Times a request is sent again after the server said it does not know it (default {@link #DEFAULT_MAX_RESTARTS}). */
        public Builder maxRestarts(int v) { protocol.maxRestarts(v); return this; }
        /** Most live RPCs, client and server, per engine (default 1,000,000). */
        public Builder maxRpcs(int v) { protocol.maxRpcs(v); return this; }
        /** Most bytes buffered for incoming messages per engine (default 1 GiB). */
        public Builder maxBufferedBytes(long v) { protocol.maxBufferedBytes(v); return this; }
        /** Most bytes buffered for incoming messages of one peer address, per engine (default 256 MiB). */
        public Builder maxBufferedBytesPerPeer(long v) { protocol.maxBufferedBytesPerPeer(v); return this; }
        /** Most bytes of outgoing requests and responses one engine holds (default 1 GiB; beyond it calls fail with kind RESOURCE_LIMIT). */
        public Builder maxOutgoingBytes(long v) { protocol.maxOutgoingBytes(v); return this; }
        /** Most live server RPCs for one peer address, per engine (default 10,000). */
        public Builder maxServerRpcsPerPeer(int v) { protocol.maxServerRpcsPerPeer(v); return this; }
        /** Receiver: bytes granted ahead of those received per message; 0 (default) = {@code maxIncoming / (N + 1)}. */
        public Builder grantWindow(int v) { protocol.grantWindow(v); return this; }
        /** Receiver: thousandths of granted bytes that go to the oldest message, not the shortest (default 50). */
        public Builder grantFifoFraction(int v) { protocol.grantFifoFraction(v); return this; }
        /** Receiver: bytes of each grant to the oldest message (default 50,000). */
        public Builder fifoGrantIncrement(int v) { protocol.fifoGrantIncrement(v); return this; }
        /**
         * Receiver: segments by which a message's window must be able to grow before its next
         * GRANT (default 8, at most a quarter of the window; 1..1000). A message's first grant, a
         * change of its priority and a sender with nothing granted left get a GRANT at once; 1 sends
         * one whenever the window can grow by a segment. Larger batches mean fewer GRANT packets to
         * build, send and receive; the window must stay well above one batch.
         */
        public Builder grantBatchSegments(int v) { protocol.grantBatchSegments(v); return this; }
        /** Highest priority level for granted bytes; the levels above carry unscheduled bytes (default 3). */
        public Builder maxScheduledPriority(int v) { protocol.maxScheduledPriority(v); return this; }
        /** Level of unscheduled bytes until the receiver's cutoffs are known (default 6). */
        public Builder defaultUnscheduledPriority(int v) { protocol.defaultUnscheduledPriority(v); return this; }
        /**
         * Sender: estimated transmit backlog before the pacer holds data back (default 5 µs; see
         * {@link #linkMbps}). Setting it turns the pacer on, unless {@link #pacerEnabled} says
         * otherwise; it then paces to {@link #linkMbps}, which you should set too.
         */
        public Builder maxNicQueue(Duration v) {
            protocol.maxNicQueueNanos(requireNonNegative(v, "maxNicQueue").toNanos());
            nicQueueChosen = true;
            return this;
        }
        /**
         * Sender: how much of a late pacer wake-up the pacer makes up (default 0.5 ms; 0 to 1 s).
         * When the event loop wakes up late while the pacer holds data back, the link has run dry
         * meanwhile; the pacer then lets the engine send the bytes the link could have carried in
         * up to this much time, so the NIC's queue covers the next late wake-up and the link stays
         * busy. The price: right after such a wake-up the NIC's queue may be up to this much deeper
         * than {@link #maxNicQueue}, and a short message waits behind it. {@code Duration.ZERO}
         * loses the time instead. Acts only with the pacer on ({@link #pacerEnabled}).
         */
        public Builder pacerLateCredit(Duration v) {
            protocol.pacerLateCreditNanos(requireNonNegative(v, "pacerLateCredit").toNanos());
            return this;
        }
        /** Sender: messages with fewer bytes than this left are never held back by the pacer (default 1,000; with the pacer on, {@link #pacerEnabled}). */
        public Builder throttleMinBytes(int v) { protocol.throttleMinBytes(v); return this; }
        /** Server: silent ticks after its whole response before it asks the client for an ACK (default 4). */
        public Builder needAckTicks(int v) { protocol.needAckTicks(v); return this; }
        /** Client: ticks an owed ACK waits to ride on DATA before it goes alone (default 2). */
        public Builder ackDelayTicks(int v) { protocol.ackDelayTicks(v); return this; }
        /** Most share of {@link #linkMbps}, in percent, that RESEND, NEED_ACK and BUSY may take (default 5). */
        public Builder timerTrafficPercent(int v) { protocol.timerTrafficPercent(v); return this; }
        /** Server: ticks a finished RPC's id is remembered against late duplicates (default 20; 0: off). */
        public Builder tombstoneTicks(int v) { protocol.tombstoneTicks(v); return this; }
        /** Receiver: least time between two CUTOFFS packets to one peer (default 1 ms). */
        public Builder cutoffsInterval(Duration v) {
            protocol.cutoffsIntervalNanos(requireNonNegative(v, "cutoffsInterval").toNanos());
            return this;
        }

        // ---------------------------------------- the API: deadlines, admission, where user code runs

        /** Deadline of calls that name none (default {@link #DEFAULT_DEADLINE}). */
        public Builder defaultDeadline(Duration v) { this.defaultDeadline = v; return this; }

        /**
         * Marks every call of this socket idempotent: running its request twice does no harm
         * (default false). It decides what happens when a server answers that it does not know a
         * call, as after a restart. An idempotent call's request is sent again. One that is not is
         * sent again only if the server cannot have run it (it never had the whole request, or it
         * has been up since before the request left); otherwise the call fails with
         * {@link HomaOutcomeUnknownException}, since its request may have run in the server that
         * was replaced. A single call can be marked with {@link CallOptions#withIdempotent(boolean)}.
         * See docs/protocol.md, "Server restarts".
         */
        public Builder idempotentCalls(boolean v) { this.idempotentCalls = v; return this; }

        /** How long a server keeps an unanswered request (default {@link #DEFAULT_REQUEST_TIMEOUT}). */
        public Builder requestTimeout(Duration v) { this.requestTimeout = v; return this; }

        /**
         * Event loops (a power of two), each with its own engine and sockets, all on the socket's
         * one port (SO_REUSEPORT). The kernel spreads peers over the loops; a datagram about a call
         * goes to the loop that started it (its index is in the RPC id). Default 1.
         */
        public Builder eventLoops(int v) { this.eventLoops = v; return this; }

        /**
         * Most calls to one server that one engine runs at once; later ones wait, in order, under
         * their deadlines (0: no limit). A burst of thousands of calls to one server otherwise
         * leaves thousands of RPCs waiting at once, and the protocol's per-RPC timers (RESEND and
         * BUSY every 5 ticks, NEED_ACK every tick) then flood both hosts, and a slow server's
         * receive queue holds more than it can read in a second. Raise it for a client that needs
         * more concurrent calls to one fast server; lower it for slow ones. Default
         * {@link #DEFAULT_MAX_CALLS_PER_SERVER}.
         */
        public Builder maxCallsPerServer(int v) { this.maxCallsPerServer = v; return this; }

        /**
         * Most requests waiting for their handler to start, per socket (at least 1). When handlers
         * fall behind, a request over this bound is refused at once: the server sends the caller
         * an OVERLOADED packet and frees the request, and the caller's future fails with
         * {@link HomaOverloadedException} (it may retry later). The handler never runs for it.
         * The bound keeps a flood from holding unbounded memory in waiting requests; size it to
         * what the handlers can work off within the callers' deadlines. Default
         * {@link #DEFAULT_MAX_QUEUED_REQUESTS}.
         */
        public Builder maxQueuedRequests(int v) { this.maxQueuedRequests = v; return this; }

        /**
         * The handler queue is managed by delay (controlled delay, as in Facebook's "Fail at
         * Scale"): when it has not been empty for an interval ({@link #queueInterval}), the server
         * is overloaded, and then requests are taken newest first (so callers who still wait are
         * answered) and a request that has waited longer than this target is refused with
         * OVERLOADED (its caller fails with {@link HomaOverloadedException} at once and may retry;
         * the handler never runs for it). The value is a floor: the socket raises it to the mean
         * time its handlers take, so that the queue of a slow handler is not mistaken for overload.
         * A request that the work in front of it would outlast (at the handlers' pace) is refused at
         * once, overload or not and whatever this target: it could only expire.
         * Whatever the setting, no handler starts for a request whose caller's deadline (sent with
         * the request) or {@link #requestTimeout} has passed. Default {@link #DEFAULT_QUEUE_TARGET}.
         */
        public Builder queueTarget(Duration v) { this.queueTarget = v; return this; }

        /**
         * How long the handler queue must stay non-empty before the server counts as overloaded
         * (see {@link #queueTarget}); a floor, raised to four times the handlers' mean time.
         * Default {@link #DEFAULT_QUEUE_INTERVAL}.
         */
        public Builder queueInterval(Duration v) { this.queueInterval = v; return this; }

        /**
         * Where handlers run and call futures complete, instead of the socket's own pool. The
         * socket never shuts a given executor down. Ignored with {@link #inlineExecution(boolean)}.
         */
        public Builder executor(Executor v) { this.executor = v; return this; }

        /** Threads of the socket's own pool (default max(2, cores)); they stop at {@link HomaSocket#close()}. */
        public Builder executorThreads(int v) { this.executorThreads = v; return this; }

        /**
         * Runs handlers and completes call futures on the event loop itself: one thread hand-off
         * less per RPC, so the lowest latency, but user code then must never block (no
         * {@code get()}, no I/O, no locks held for long): while it runs, this socket's protocol
         * stops (no sends, no receives, no timers). A request that came in one datagram then
         * reaches the handler where it was read, with no copy, and holds that read buffer (with
         * epoll a batch of up to 1 MiB) until it is answered or dropped (and a {@code payload()}
         * taken from it until that is released): a handler that holds requests to answer later
         * should answer soon or use handler threads, whose requests come copied into memory of
         * their own. Default false.
         */
        public Builder inlineExecution(boolean v) { this.inlineExecution = v; return this; }

        // ---------------------------------------- the I/O shell: sockets, batching, GSO/GRO, transports

        /**
         * One socket per priority level, each with its own IP TOS (Netty sets TOS per socket only),
         * all bound to the same port. False: one socket and no TOS. Default true.
         */
        public Builder prioritySockets(boolean v) { this.prioritySockets = v; return this; }

        /** The IP TOS byte of each level 0..7 (default Linux Homa's {@code level << 5}). */
        public Builder tosByLevel(int... v) { this.tosByLevel = v == null ? null : v.clone(); return this; }

        /**
         * Datagrams read per system call (epoll: recvmmsg; io_uring: receives submitted together);
         * 1 = no batching (default 32).
         */
        public Builder receiveBatch(int v) { this.receiveBatch = v; return this; }

        /** UDP GSO for runs of equal-size segments, where the kernel supports it (default true). */
        public Builder gso(boolean v) { this.gso = v; return this; }

        /**
         * UDP GRO on receive, where the kernel supports it (epoll only, ignored elsewhere; default
         * true): the kernel hands over up to 64 KB of one peer's segments as one datagram, which
         * the engine walks segment by segment, and a read takes many such datagrams at once.
         */
        public Builder gro(boolean v) { this.gro = v; return this; }

        /**
         * Event loops spin instead of sleeping: lowest latency, a busy core per loop (default
         * false). A thread waiting for a call's future then spins on the socket itself too
         * ({@link #callerSpin(Duration)}, 1 ms by default with busy polling and one event loop), reading its response,
         * and while it does (and for a millisecond after, until its next call) its loop sleeps:
         * one spinning thread per side, so a client and a server fit two cores. Epoll and NIO only:
         * ignored on io_uring, whose I/O handler takes no select strategy. See docs/tuning.md.
         */
        public Builder busyPoll(boolean v) { this.busyPoll = v; return this; }

        /**
         * Whether the thread that makes a call (or replies from a handler thread) does the protocol
         * work and sends the datagrams itself when the socket's event loop is not busy, as Linux
         * Homa's {@code sendmsg} does, instead of handing the work to the loop (default true). That
         * saves the loop's wake-up, tens of microseconds on a loaded machine, on the way out: the
         * call or reply method then returns after a system call of its own, a few microseconds; it
         * never waits for the loop (when the loop is busy, the work is queued for it as before).
         * Completion stages and inline handlers that the turn happens to complete run on that
         * thread. Epoll and io_uring only (NIO always hands off), and off while faults are
         * injected. See docs/netty.md, "Threads and hand-offs".
         */
        public Builder callerSends(boolean v) { this.callerSends = v; return this; }

        /**
         * How long a thread blocked in a call future's {@code get()} or {@code join()} reads the
         * socket itself, spinning, before it sleeps on the socket ({@link #callerReads(boolean)})
         * or parks (default {@link HomaConfig#DEFAULT_CALLER_SPIN}, zero, or with busy polling
         * {@link HomaConfig#DEFAULT_BUSY_POLL_CALLER_SPIN}, 1 ms). A response that arrives
         * meanwhile is handled on that thread, so neither the event loop's wake-up nor the caller's
         * unpark is on its way; each microsecond of spin is a microsecond of CPU, spent whether or
         * not the response comes in time. Needs {@link #callerSends(boolean)} and a native
         * transport (ignored on NIO); a caller on the event loop never spins. See docs/tuning.md.
         *
         * @throws HomaBadArgumentException if negative or longer than a second
         */
        public Builder callerSpin(Duration v) {
            if (v == null || v.isNegative() || v.compareTo(Duration.ofSeconds(1)) > 0) {
                throw new HomaBadArgumentException("callerSpin must be between 0 and 1 s, not " + v);
            }
            this.callerSpin = v;
            return this;
        }

        /**
         * Whether a thread blocked in a call future's {@code get()} or {@code join()} (after its
         * {@link #callerSpin(Duration) spin}, if any) waits for the response on the socket itself,
         * sleeping in the kernel in the event loop's stead, and handles it on its own thread
         * (default true). The response then wakes that one thread, as a blocking TCP read does,
         * where otherwise it wakes the loop, which wakes the caller: one wake-up and tens of
         * microseconds saved per call on a loaded machine, at no CPU cost while it waits. The
         * future then completes on the waiting thread once it stopped reading (with the default
         * executor too: never on the loop), and stages chained on it run there. One thread per
         * socket reads so at a time, and only while the socket is idle (its own call and at most
         * one more in the engine); other waiters park as before, and a thread interrupted, or a
         * virtual thread, parks too. Epoll with one event loop (ignored otherwise, and with
         * injected faults), and on the module path only where Netty's epoll package is open to
         * module {@code io.homa} ({@code --add-opens
         * io.netty.transport.classes.epoll/io.netty.channel.epoll=io.homa}; without it the socket
         * logs once and callers park as before). See docs/netty.md, "Threads and hand-offs".
         */
        public Builder callerReads(boolean v) { this.callerReads = v; return this; }

        /** Use a native transport (epoll, io_uring) when available (default true); false forces NIO. */
        public Builder nativeTransport(boolean v) { this.nativeTransport = v; return this; }

        /**
         * The transport to prefer (default {@link IoTransport#AUTO}). A native transport the
         * process cannot use (not Linux, a kernel or seccomp filter without io_uring, too little
         * locked memory, {@code -Dio.netty.transport.noNative=true}) falls back to the other native
         * one, then to NIO, with one log line saying why; {@link HomaMetrics#transport()} and the
         * socket's {@code toString()} tell which one runs. {@link #nativeTransport(boolean)
         * nativeTransport(false)} forces NIO whatever this says.
         */
        public Builder ioTransport(IoTransport v) { this.ioTransport = v; return this; }

        /** SO_RCVBUF per socket (default 4 MiB). */
        public Builder receiveBufferBytes(int v) { this.receiveBufferBytes = v; return this; }

        /** SO_SNDBUF per socket (default 4 MiB). */
        public Builder sendBufferBytes(int v) { this.sendBufferBytes = v; return this; }

        // ---------------------------------------- the TCP fallback (docs/deployment.md)

        /**
         * Reachability over TCP where Homa's UDP is blocked (docs/deployment.md). When true, the
         * socket also listens for TCP on its own port number and serves those connections with
         * the same handler and the same limits; and a call whose server sends no Homa packet at
         * all within {@link #probeInterval} is retried over TCP, after which that peer is called
         * over TCP for {@link #fallbackPeriod}, then probed over Homa again. A request runs at
         * most once: the retry names the Homa RPC, and a server that received it over Homa
         * refuses the retry (the call then goes on, and ends, over Homa). Default false: the
         * fallback opens a TCP port on every socket and hides a network that blocks Homa, which
         * an operator should rather see and fix; turn it on where the path is not yours. On a
         * socket secured by {@link HomaSecurity#mutualTls}, the fallback's connections are TLS 1.3
         * with both certificates verified, on the same port as the key exchange.
         */
        public Builder tcpFallback(boolean v) { this.tcpFallback = v; return this; }

        /** See {@link HomaConfig#DEFAULT_PROBE_INTERVAL}; 1 ms to 10 s. */
        public Builder probeInterval(Duration v) { this.probeInterval = v; return this; }

        /** See {@link HomaConfig#DEFAULT_FALLBACK_PERIOD}; positive, at most a day. */
        public Builder fallbackPeriod(Duration v) { this.fallbackPeriod = v; return this; }

        /** See {@link HomaConfig#DEFAULT_TCP_CONNECTIONS_PER_PEER}; 1 to 64. */
        public Builder tcpConnectionsPerPeer(int v) { this.tcpConnectionsPerPeer = v; return this; }

        /** See {@link HomaConfig#DEFAULT_TCP_IDLE_TIMEOUT}; positive, at most a day. */
        public Builder tcpIdleTimeout(Duration v) { this.tcpIdleTimeout = v; return this; }

        /**
         * Seals every datagram (see {@link HomaSecurity}); null (the default) sends plain Homa.
         * Each sealed datagram carries 32 bytes more, so
         * segments carry that much less payload to fit the MTU. Every peer must be secured with
         * the same keys. With {@link #tcpFallback(boolean)} only in the mutual-TLS mode (the
         * fallback's calls then run over TLS); pre-shared keys with the fallback are refused.
         */
        public Builder security(HomaSecurity v) { this.security = v; return this; }

        // ---------------------------------------- fault injection (io.homa.testing)

        /** Set by {@code io.homa.testing.FaultInjection}; see there. */
        private Builder faultInjection(long seed, FaultModel data, FaultModel control) {
            this.faultSeed = seed;
            this.dataFaults = data;
            this.controlFaults = control;
            return this;
        }

        /**
         * Validates and builds.
         *
         * @throws HomaBadArgumentException naming the first bad value
         */
        public HomaConfig build() {
            if (bindAddress == null) {
                throw new HomaBadArgumentException("bindAddress must not be null");
            }
            if (bindAddress.isUnresolved()) {
                throw new HomaBadArgumentException("bindAddress " + bindAddress + " is unresolved");
            }
            requirePositive(defaultDeadline, "defaultDeadline");
            requirePositive(requestTimeout, "requestTimeout");
            check(eventLoops >= 1 && eventLoops <= 64 && Integer.bitCount(eventLoops) == 1,
                    "eventLoops must be a power of two in 1..64, was " + eventLoops);
            check(maxCallsPerServer >= 0, "maxCallsPerServer must be >= 0 (0: no limit), was " + maxCallsPerServer);
            check(maxQueuedRequests >= 1, "maxQueuedRequests must be >= 1, was " + maxQueuedRequests);
            requirePositive(queueTarget, "queueTarget");
            requirePositive(queueInterval, "queueInterval");
            check(ioTransport != null, "ioTransport must not be null (AUTO picks one)");
            check(executorThreads >= 1, "executorThreads must be >= 1, was " + executorThreads);
            check(tosByLevel != null && tosByLevel.length == WireFormat.PRIORITY_LEVELS,
                    "tosByLevel must have 8 entries (one per level), was "
                            + (tosByLevel == null ? "null" : Arrays.toString(tosByLevel)));
            for (int t : tosByLevel) {
                check(t >= 0 && t <= 255, "tosByLevel entries must be 0..255: " + Arrays.toString(tosByLevel));
            }
            check(receiveBatch >= 1 && receiveBatch <= 1024, "receiveBatch must be 1..1024, was " + receiveBatch);
            check(receiveBufferBytes >= 1024, "receiveBufferBytes must be >= 1024, was " + receiveBufferBytes);
            check(sendBufferBytes >= 1024, "sendBufferBytes must be >= 1024, was " + sendBufferBytes);
            requirePositive(probeInterval, "probeInterval");
            check(probeInterval.compareTo(Duration.ofMillis(1)) >= 0 && probeInterval.compareTo(Duration.ofSeconds(10)) <= 0,
                    "probeInterval must be 1 ms to 10 s, was " + probeInterval);
            requirePositive(fallbackPeriod, "fallbackPeriod");
            requirePositive(tcpIdleTimeout, "tcpIdleTimeout");
            check(fallbackPeriod.compareTo(Duration.ofDays(1)) <= 0, "fallbackPeriod must be at most a day, was "
                    + fallbackPeriod);
            check(tcpIdleTimeout.compareTo(Duration.ofDays(1)) <= 0, "tcpIdleTimeout must be at most a day, was "
                    + tcpIdleTimeout);
            check(tcpConnectionsPerPeer >= 1 && tcpConnectionsPerPeer <= 64,
                    "tcpConnectionsPerPeer must be 1..64, was " + tcpConnectionsPerPeer);
            check(security == null || security.isMutualTls() || !tcpFallback, "pre-shared keys and tcpFallback cannot"
                    + " be combined: the fallback's TCP frames would travel in plaintext; with"
                    + " HomaSecurity.mutualTls they run over TLS (docs/security.md)");
            EngineConfig engine;
            try {
                engine = new DerivedProtocol(mtuChosen, budgetChosen, unscheduledChosen, nicQueueChosen, linkChosen, pacerChosen)
                        .build(protocol, bindAddress, LARGE_MTU_MAX_INCOMING);
                if (security != null) { // the sealed datagram, not the engine's, must fit the MTU
                    engine = engine.toBuilder().ipUdpOverhead(engine.ipUdpOverhead + PspFormat.OVERHEAD).build();
                }
            } catch (IllegalArgumentException e) {
                throw new HomaBadArgumentException("bad protocol setting: " + e.getMessage(), e);
            }
            return new HomaConfig(this, engine);
        }

        private static Duration requireNonNegative(Duration d, String name) {
            if (d == null || d.isNegative()) {
                throw new HomaBadArgumentException(name + " must be a duration >= 0, was " + d);
            }
            return d;
        }

        private static Duration requirePositive(Duration d, String name) {
            if (d == null || d.isZero() || d.isNegative()) {
                throw new HomaBadArgumentException(name + " must be a positive duration, was " + d);
            }
            return d;
        }

        private static void check(boolean ok, String message) {
            if (!ok) {
                throw new HomaBadArgumentException(message);
            }
        }
    }
}
