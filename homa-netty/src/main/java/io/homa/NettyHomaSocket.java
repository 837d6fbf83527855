package io.homa;

import io.homa.core.Counter;
import io.homa.core.EngineConfig;
import io.homa.core.ReceivedMessage;
import io.homa.core.wire.DropReason;
import io.homa.core.wire.WireFormat;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.management.ObjectName;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Consumer;

/**
 * The {@link HomaSocket} on Netty: one {@link EngineLoop} per event loop, all on one UDP port.
 * This class validates arguments on the caller's thread, hands each call to a loop (one hand-off,
 * none when the caller is one of the socket's loops), and owns the lifecycle: open, metrics, close.
 *
 * <p>Every call in flight is also in {@link #inFlight}, so that {@link #close()} can fail even a
 * call whose start task the closing event loop never ran. Whoever removes a call from it
 * ({@link #forget}) is the one who completes its future.
 */
final class NettyHomaSocket implements HomaSocket {
    private static final Logger log = LoggerFactory.getLogger(NettyHomaSocket.class);
    private static final AtomicInteger SERIAL = new AtomicInteger();
    /**
     * How long close() waits for threads to end: an event loop ends within one drain, and user code
     * on the executor normally within milliseconds; 5 s bounds a close behind a stuck handler.
     */
    private static final long CLOSE_WAIT_MILLIS = 5_000;
    /** Deadlines beyond this are treated as this (about 146 years of nanoseconds / 2). */
    private static final long MAX_DEADLINE_NANOS = Long.MAX_VALUE / 4;

    private final HomaConfig config;
    private final int serial;
    private final Transport transport;
    private final MultiThreadIoEventLoopGroup group;
    private final Dispatcher dispatcher;
    private final EngineLoop[] loops;
    private final Set<ClientCall<?>> inFlight = ConcurrentHashMap.newKeySet();
    /** Rarely changed, read at every completed call: copy on write. */
    private final List<CallListener> callListeners = new CopyOnWriteArrayList<>();
    /** The event loops' threads, joined by close(). */
    private final Set<Thread> loopThreads = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicInteger nextLoop = new AtomicInteger();
    private volatile HomaHandler handler;
    /** This socket's MBean when {@link HomaJmx#AUTO_REGISTER_PROPERTY} registered it, else null. */
    private volatile ObjectName jmxName;
    private InetSocketAddress localAddress;
    /** The channels of each loop, by priority level (levels may share one). */
    private Channel[][] channels = new Channel[0][];
    /** TCP fallback (null when off): counters of its threads, by {@link HomaMetrics.Shell} ordinal. */
    private final AtomicLongArray tcpCounters = new AtomicLongArray(HomaMetrics.Shell.values().length);
    private final PeerPaths peers;
    private final TcpServer tcpServer;
    private TcpClient tcpClient;

    private NettyHomaSocket(HomaConfig config) {
        this.config = config;
        this.serial = SERIAL.incrementAndGet();
        this.transport = new Transport(config);
        this.loops = new EngineLoop[config.eventLoops()];
        this.group = transport.newGroup(loops.length, serial, loopThreads);
        this.dispatcher = Dispatcher.create(config, serial);
        this.peers = config.tcpFallback() ? new PeerPaths(config, tcpCounters) : null;
        this.tcpServer = config.tcpFallback() ? new TcpServer(this, dispatcher, tcpCounters) : null;
    }

    static NettyHomaSocket open(HomaConfig config) {
        NettyHomaSocket s = new NettyHomaSocket(config);
        try {
            s.bind();
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
        JfrEvents.opened(s);
        s.jmxName = HomaJmx.autoRegister(s, s.serial);
        return s;
    }

    /** Creates the engines, binds every channel on the one port, and starts reading. */
    private void bind() {
        EngineConfig base = config.engineConfig();
        // One GSO send carries at most one UDP payload (64 KB) and 64 segments.
        int maxSegments = Math.max(1, Math.min(base.maxGsoSegments,
                Transport.MAX_UDP_PAYLOAD / base.maxDatagram()));
        // Zero-copy send gathers header and payload slices into a composite: epoll hands it to the
        // kernel as an iovec, but NIO's datagram channel first copies any composite into one direct
        // buffer, so there the engine's own single copy is cheaper.
        boolean inPlace = base.sendPayloadByReference && transport.epoll;
        SecureRandom random = new SecureRandom();
        Iterator<EventExecutor> executors = group.iterator();
        for (int i = 0; i < loops.length; i++) {
            EngineConfig ec = base.toBuilder().idShard(i, loops.length).maxGsoSegments(maxSegments)
                    .sendPayloadByReference(inPlace).build();
            loops[i] = new EngineLoop(this, (EventLoop) executors.next(), ec, random.nextLong(), dispatcher);
        }
        boolean shared = loops.length > 1 || (config.prioritySockets() && distinctTos() > 1);
        int port = 0;
        Channel[][] byLevel = new Channel[loops.length][WireFormat.PRIORITY_LEVELS];
        channels = byLevel;
        for (int i = 0; i < loops.length; i++) {
            Map<Integer, Channel> byTos = new HashMap<>();
            for (int level = 0; level < WireFormat.PRIORITY_LEVELS; level++) {
                int tos = config.prioritySockets() ? config.tos(level) : -1;
                Channel ch = byTos.get(tos);
                if (ch == null) {
                    ch = port == 0 ? bindFirst(loops[i], shared, tos)
                            : transport.bind(loops[i].loop, config.bindAddress(), port, shared, tos, loops[i].newInbound());
                    if (port == 0) {
                        localAddress = Transport.localAddress(ch);
                        port = localAddress.getPort();
                    }
                    byTos.put(tos, ch);
                }
                byLevel[i][level] = ch;
            }
        }
        if (config.tcpFallback()) {
            tcpClient = new TcpClient(config, transport, group, tcpCounters, localAddress);
        }
        FaultInjector[] faults = new FaultInjector[loops.length];
        for (int i = 0; i < loops.length; i++) {
            if (config.faultInjection()) {
                faults[i] = new FaultInjector(config.faultSeed() * 31 + i, config.dataFaults(), config.controlFaults());
            }
            loops[i].attach(byLevel[i], transport.gso, faults[i], loops);
        }
        for (Channel[] channels : byLevel) {
            for (Channel ch : channels) {
                ch.config().setAutoRead(true);
            }
        }
        log.debug("Homa socket {} open on {} ({}, {} event loop(s), {} socket(s) per loop, gso={}, gro={},"
                        + " receive batch {})", serial, localAddress, transport.name(), loops.length,
                config.prioritySockets() ? distinctTos() : 1, transport.gso, transport.gro, transport.receiveBatch);
    }

    /** Binds attempts when the port is free for UDP but not for TCP (or the other way round). */
    private static final int PORT_ATTEMPTS = 16;

    /**
     * Binds the first UDP channel. With TCP fallback the port must be free for both protocols: the
     * TCP listener binds first (picking the port when the configuration says 0), then UDP joins
     * its port number; when that is taken, both try again on another port.
     */
    private Channel bindFirst(EngineLoop loop, boolean shared, int tos) {
        if (!config.tcpFallback()) {
            return transport.bind(loop.loop, config.bindAddress(), 0, shared, tos, loop.newInbound());
        }
        InetSocketAddress want = config.bindAddress();
        for (int attempt = 1; ; attempt++) {
            Channel listener = tcpServer.bind(group, transport, want);
            InetSocketAddress at = (InetSocketAddress) listener.localAddress();
            try {
                return transport.bind(loop.loop, new InetSocketAddress(want.getAddress(), at.getPort()), 0, shared, tos,
                        loop.newInbound());
            } catch (HomaException e) {
                listener.close().awaitUninterruptibly();
                if (want.getPort() != 0 || attempt == PORT_ATTEMPTS) {
                    throw e;
                }
                log.debug("port {} is free for TCP but not for UDP; trying another", at.getPort());
            }
        }
    }

    private int distinctTos() {
        Set<Integer> s = new HashSet<>();
        for (int level = 0; level < WireFormat.PRIORITY_LEVELS; level++) {
            s.add(config.tos(level));
        }
        return s.size();
    }

    /** What the transport choice came to (epoll or NIO, GSO, GRO): for tests that must know. */
    Transport transport() {
        return transport;
    }

    /** Where user code runs, with the queue of requests waiting for the handler: for tests. */
    Dispatcher dispatcher() {
        return dispatcher;
    }

    /** The channel of {@code loop} for priority {@code level}: for tests that read its options. */
    Channel channel(int loop, int level) {
        return channels[loop][level];
    }

    @Override
    public InetSocketAddress localAddress() {
        return localAddress;
    }

    @Override
    public HomaConfig config() {
        return config;
    }

    // ------------------------------------------------------------------ calls

    @Override
    public CompletableFuture<byte[]> call(InetSocketAddress server, byte[] request) {
        return call(server, request, config.defaultDeadline());
    }

    @Override
    public CompletableFuture<byte[]> call(InetSocketAddress server, byte[] request, Duration deadline) {
        if (request == null) {
            throw new HomaBadArgumentException("request must not be null (use new byte[0] for an empty one)");
        }
        InetSocketAddress to = Addresses.normalise(server);
        long deadlineAt = check(to, request.length, deadline);
        return submit(new ClientCall<>(to, ByteBuffer.wrap(request), null, deadline, deadlineAt,
                NettyHomaSocket::toByteArray));
    }

    @Override
    public CompletableFuture<ByteBuf> call(InetSocketAddress server, ByteBuf request) {
        return call(server, request, config.defaultDeadline());
    }

    @Override
    public CompletableFuture<ByteBuf> call(InetSocketAddress server, ByteBuf request, Duration deadline) {
        if (request == null) {
            throw new HomaBadArgumentException("request must not be null (use Unpooled.EMPTY_BUFFER for an empty one)");
        }
        try {
            InetSocketAddress to = Addresses.normalise(server);
            long deadlineAt = check(to, request.readableBytes(), deadline);
            return submit(new ClientCall<>(to, EngineLoop.viewOf(request), request, deadline, deadlineAt,
                    NettyPayloadMemory::toByteBuf));
        } catch (RuntimeException e) {
            ReferenceCountUtil.safeRelease(request);
            throw e;
        }
    }

    /** A response for the {@code byte[]} API: its one copy, and its memory released. */
    private static byte[] toByteArray(ReceivedMessage m) {
        try {
            return m.toByteArray();
        } finally {
            m.release();
        }
    }

    /** Validates a call's arguments; returns its deadline as a {@link System#nanoTime()} value. */
    private long check(InetSocketAddress server, int length, Duration deadline) {
        if (server == null) {
            throw new HomaBadArgumentException("server address must not be null");
        }
        if (server.isUnresolved()) {
            throw new HomaBadArgumentException("server address " + server + " is unresolved");
        }
        if (server.getPort() == 0) {
            throw new HomaBadArgumentException("server address " + server + " has port 0");
        }
        String unreachable = Addresses.unreachable(localAddress, server);
        if (unreachable != null) {
            throw new HomaBadArgumentException("cannot call " + server + ": " + unreachable);
        }
        if (deadline == null || deadline.isZero() || deadline.isNegative()) {
            throw new HomaBadArgumentException("deadline must be a positive duration, was " + deadline);
        }
        if (length > config.maxMessageLength()) {
            throw new HomaMessageTooLargeException("request of " + length + " bytes to " + server
                    + " exceeds maxMessageLength " + config.maxMessageLength());
        }
        long nanos;
        try {
            nanos = Math.min(deadline.toNanos(), MAX_DEADLINE_NANOS);
        } catch (ArithmeticException e) {
            nanos = MAX_DEADLINE_NANOS;
        }
        return System.nanoTime() + nanos;
    }

    private <T> CompletableFuture<T> submit(ClientCall<T> c) {
        inFlight.add(c);
        if (closed.get()) {
            finishClosed(c, true);
        } else {
            EngineLoop loop = pickLoop();
            if (peers != null && peers.useTcp(c.server)) {
                callOverTcp(c, loop);
                return c.future;
            }
            onHoma(c, loop);
        }
        return c.future;
    }

    /**
     * The loop to run a new call: the caller's own when it is one of ours (an inline handler or
     * completion stage calling on), which saves a hand-off and a wake-up; else the next in turn.
     */
    private EngineLoop pickLoop() {
        if (loops.length == 1) {
            return loops[0];
        }
        for (EngineLoop l : loops) {
            if (l.loop.inEventLoop()) {
                return l;
            }
        }
        return loops[nextLoop.getAndIncrement() & (loops.length - 1)];
    }

    /** Starts a call over Homa on {@code loop}; cancelling its future aborts the RPC (the server learns of it when it next asks). */
    private static void onHoma(ClientCall<?> c, EngineLoop loop) {
        c.startOn(loop);
    }

    /**
     * Sends a call to a peer on TCP ({@link PeerPaths}) over TCP directly, with its deadline timed
     * on {@code loop}. Should the TCP connection fail, the call goes over Homa after all (its
     * timeouts then decide). The socket keeps the request buffer until the TCP attempt is over.
     */
    private void callOverTcp(ClientCall<?> c, EngineLoop loop) {
        long remaining = c.deadlineNanos - System.nanoTime();
        ScheduledFuture<?> timer = loop.loop.schedule(() -> {
            if (forget(c)) {
                tcpCounters.incrementAndGet(HomaMetrics.Shell.CALLS_FAILED.ordinal());
                tcpCounters.incrementAndGet(HomaMetrics.Shell.CALLS_DEADLINE_EXPIRED.ordinal());
                dispatcher.execute(() -> c.fail(new HomaTimeoutException(c + " over TCP: no response within its"
                        + " deadline of " + c.deadline)));
            }
        }, Math.max(0, remaining), TimeUnit.NANOSECONDS);
        c.future.whenComplete((v, e) -> timer.cancel(false));
        ByteBuf body = c.owner != null ? c.owner.retainedDuplicate() : Unpooled.wrappedBuffer(c.payload.duplicate());
        tcpClient.send(c.server, 0, 0, body).whenComplete((reply, error) -> {
            if (error != null) {
                if (isOpen() && inFlight.contains(c)) {
                    log.debug("{}: TCP failed ({}); trying Homa", c, error.toString());
                    peers.offTcp(c.server);
                    timer.cancel(false);
                    onHoma(c, loop);
                } else {
                    c.releaseOwner();
                }
                return;
            }
            c.releaseOwner();
            if (forget(c)) {
                HomaException failure = TcpClient.failure(c, reply);
                tcpCounters.incrementAndGet((failure == null ? HomaMetrics.Shell.CALLS_SUCCEEDED
                        : HomaMetrics.Shell.CALLS_FAILED).ordinal());
                dispatcher.execute(() -> TcpClient.complete(c, reply, failure));
            }
        });
    }

    /** The calling side of the TCP fallback, or null when it is off. */
    TcpClient tcpClient() {
        return tcpClient;
    }

    /** Which peers are on TCP, or null when the fallback is off. */
    PeerPaths peers() {
        return peers;
    }

    /**
     * TCP fallback, serving side: may a TCP retry of the Homa RPC {@code rpcId} of {@code client}
     * (its UDP address) run? True unless an engine loop received that request over Homa; when
     * true, every loop also drops that request should it still arrive over Homa. Completes on an
     * event loop.
     */
    CompletableFuture<Boolean> claimForTcp(InetSocketAddress client, long rpcId) {
        CompletableFuture<Boolean> all = CompletableFuture.completedFuture(true);
        for (EngineLoop l : loops) {
            all = all.thenCompose(ok -> ok ? l.claimForTcp(client, rpcId) : CompletableFuture.completedFuture(false));
        }
        return all;
    }

    /** Closes the UDP sockets only, so that this socket serves over TCP alone: for tests of the fallback. */
    void closeUdpForTests() {
        for (Channel[] byLevel : channels) {
            for (Channel ch : byLevel) {
                ch.close().awaitUninterruptibly();
            }
        }
    }

    /** Removes a call from the in-flight set; true if this caller is the one to complete it. */
    boolean forget(ClientCall<?> c) {
        return inFlight.remove(c);
    }

    /**
     * Fails a call because the socket is closed, unless someone completed it already.
     *
     * @param releaseOwner whether the call's buffer is still ours to release (it never reached an
     *                     engine; once it did, the engine loop releases it)
     */
    void finishClosed(ClientCall<?> c, boolean releaseOwner) {
        if (forget(c)) {
            if (releaseOwner) {
                c.releaseOwner();
            }
            dispatcher.execute(() -> c.fail(new HomaClosedException(c + " failed: the socket "
                    + localAddress + " is closed")));
        }
    }

    // ------------------------------------------------------------------ serving

    @Override
    public void serve(HomaHandler handler) {
        if (handler == null) {
            throw new HomaBadArgumentException("handler must not be null");
        }
        this.handler = handler;
    }

    HomaHandler handler() {
        return handler;
    }

    // ------------------------------------------------------------------ metrics

    @Override
    public HomaMetrics metrics() {
        long[] counters = new long[Counter.values().length];
        long[] drops = new long[DropReason.values().length];
        long[] shell = new long[HomaMetrics.Shell.values().length];
        int[] active = new int[2];
        long[] gauges = new long[HomaMetrics.GAUGES];
        onEveryLoop(l -> {
            synchronized (counters) { // the loops add at the same time
                l.addMetrics(counters, drops, shell, active, gauges);
            }
        });
        for (int i = 0; i < shell.length; i++) {
            shell[i] += tcpCounters.get(i);
        }
        shell[HomaMetrics.Shell.EXECUTOR_HANDOFFS.ordinal()] += dispatcher.handoffs();
        if (peers != null) {
            shell[HomaMetrics.Shell.PEERS_ON_TCP.ordinal()] = peers.size();
        }
        return new HomaMetrics(counters, drops, shell, active[0], active[1], gauges, transport.name());
    }

    @Override
    public List<RpcInfo> rpcs() {
        List<RpcInfo> all = new ArrayList<>();
        onEveryLoop(l -> {
            List<RpcInfo> mine = l.rpcs();
            synchronized (all) { // the loops run these at the same time
                all.addAll(mine);
            }
        });
        return List.copyOf(all);
    }

    /**
     * Runs {@code action} on every engine loop (one hand-off each, all in flight together) and waits
     * for them; on the calling thread for a loop that has ended (its engine is then still).
     */
    private void onEveryLoop(Consumer<EngineLoop> action) {
        List<Future<?>> pending = new ArrayList<>();
        List<EngineLoop> pendingLoops = new ArrayList<>();
        for (EngineLoop l : loops) {
            if (l == null) {
                continue;
            }
            if (group.isTerminated() || l.loop.inEventLoop()) {
                action.accept(l);
                continue;
            }
            try {
                pending.add(l.loop.submit(() -> action.accept(l)));
                pendingLoops.add(l);
            } catch (RejectedExecutionException e) {
                group.terminationFuture().awaitUninterruptibly(CLOSE_WAIT_MILLIS);
                action.accept(l);
            }
        }
        for (int i = 0; i < pending.size(); i++) {
            Future<?> f = pending.get(i);
            if (!f.awaitUninterruptibly(CLOSE_WAIT_MILLIS) || !f.isSuccess()) {
                group.terminationFuture().awaitUninterruptibly(CLOSE_WAIT_MILLIS);
                if (!f.isSuccess()) {
                    action.accept(pendingLoops.get(i));
                }
            }
        }
    }

    // ------------------------------------------------------------------ call listeners

    @Override
    public void addCallListener(CallListener listener) {
        if (listener == null) {
            throw new HomaBadArgumentException("listener must not be null");
        }
        callListeners.add(listener);
    }

    @Override
    public void removeCallListener(CallListener listener) {
        callListeners.remove(listener);
    }

    /** The listeners, read by the event loops at each completed call. */
    List<CallListener> callListeners() {
        return callListeners;
    }

    // ------------------------------------------------------------------ close

    @Override
    public boolean isOpen() {
        return !closed.get();
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (tcpClient != null) {
            tcpClient.close();
        }
        JfrEvents.closed(this);
        if (jmxName != null) {
            HomaJmx.unregister(jmxName);
        }
        boolean onOwnLoop = false;
        for (EngineLoop l : loops) {
            if (l == null) {
                continue;
            }
            if (l.loop.inEventLoop()) {
                onOwnLoop = true;
                l.closeOnLoop();
            } else {
                try {
                    l.loop.execute(l::closeOnLoop);
                } catch (RejectedExecutionException e) {
                    // already shutting down
                }
            }
        }
        group.shutdownGracefully(0, CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        if (onOwnLoop) {
            group.terminationFuture().addListener(f -> afterTermination(false));
        } else {
            long giveUp = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_WAIT_MILLIS);
            if (!group.terminationFuture().awaitUninterruptibly(CLOSE_WAIT_MILLIS)) {
                log.warn("Homa socket {}: event loops still running {} ms after close", localAddress,
                        CLOSE_WAIT_MILLIS);
            }
            Dispatcher.join(loopThreads, giveUp); // they end right after the termination future
            afterTermination(!dispatcher.isOwnThread());
        }
    }

    /** Fails the calls no loop got to, then stops the executor (waiting for it if {@code wait}). */
    private void afterTermination(boolean wait) {
        for (EngineLoop l : loops) {
            if (l != null) {
                l.runLeftoverCommands();
            }
        }
        for (ClientCall<?> c : inFlight) {
            finishClosed(c, true);
        }
        dispatcher.shutdown(wait ? CLOSE_WAIT_MILLIS : 0);
        log.debug("Homa socket {} on {} closed", serial, localAddress);
    }

    @Override
    public String toString() {
        return "HomaSocket#" + serial + "{" + localAddress + ", " + transport.name() + (closed.get() ? ", closed" : "") + "}";
    }
}
