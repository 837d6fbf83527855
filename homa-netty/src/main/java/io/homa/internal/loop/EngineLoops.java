package io.homa.internal.loop;

import io.homa.core.EngineConfig;
import io.homa.core.RpcState;
import io.homa.internal.Failure;
import io.homa.internal.ShellConfig;
import io.homa.internal.observe.JfrEvents;
import io.homa.internal.observe.MetricsSnapshot;
import io.homa.internal.observe.ShellCounter;
import io.homa.internal.rpc.CallObserver;
import io.homa.internal.rpc.CallsInFlight;
import io.homa.internal.rpc.ClientCall;
import io.homa.internal.rpc.Dispatcher;
import io.homa.internal.rpc.InboundRequest;
import io.homa.internal.rpc.RequestHandler;
import io.homa.internal.tcp.PeerPaths;
import io.homa.internal.tcp.TcpClient;
import io.homa.internal.tcp.TcpServer;
import io.homa.internal.transport.Transport;
import io.homa.internal.udp.FaultInjector;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Consumer;

/**
 * The I/O shell of one socket: one {@link EngineLoop} per event loop, all on one UDP port, the
 * socket's executor ({@link Dispatcher}) and the TCP fallback. It binds the channels, hands each
 * call to a loop (one hand-off, none when the caller is one of the socket's loops), gathers
 * metrics and snapshots from every loop, and closes everything in order. The API's socket sits on
 * top and reaches the application only through what it gave here: the {@link ShellConfig} (with
 * its exception factory), the {@link RequestHandler}, the {@link InboundRequest.Factory} and the
 * {@link CallObserver}.
 *
 * <p>Every call in flight is also in {@link #inFlight}, so that {@link #close()} can fail even a
 * call whose start task the closing event loop never ran. Whoever takes a call from it
 * ({@link #forget}) is the one who completes its future. Internal use only; any thread.
 */
public final class EngineLoops implements TcpServer.Host, JfrEvents.Sampled {
    private static final Logger log = LoggerFactory.getLogger(EngineLoops.class);
    /**
     * How long close() waits for threads to end: an event loop ends within one drain, and user code
     * on the executor normally within milliseconds; 5 s bounds a close behind a stuck handler.
     */
    private static final long CLOSE_WAIT_MILLIS = 5_000;
    /** Room for one datagram as UDP GRO may hand it over: up to 64 KB of coalesced segments. */
    private static final int GRO_DATAGRAM_BYTES = 65_536;
    /** Callers spinning on this socket's sockets now (EngineLoop.pollUntil): busy loops sleep meanwhile. */
    final AtomicInteger callersSpinning = new AtomicInteger();

    final ShellConfig config;
    /** What the loops remember of their peers' SPIs (keys, replay windows); null when not secured. */
    final io.homa.core.psp.PspReceiveState pspState;
    final CallObserver observer;
    private final int serial;
    private final InboundRequest.Factory requests;
    private final Transport transport;
    private final MultiThreadIoEventLoopGroup group;
    private final Dispatcher dispatcher;
    private final EngineLoop[] loops;
    private final CallsInFlight inFlight = new CallsInFlight();
    /** The event loops' threads, joined by close(). */
    private final Set<Thread> loopThreads = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicInteger nextLoop = new AtomicInteger();
    private volatile RequestHandler handler;
    private InetSocketAddress localAddress;
    /** The channels of each loop, by priority level (levels may share one). */
    private Channel[][] channels = new Channel[0][];
    /** TCP fallback (null when off): counters of its threads, by {@link ShellCounter} ordinal. */
    private final AtomicLongArray tcpCounters = new AtomicLongArray(ShellCounter.values().length);
    private final PeerPaths peers;
    private final TcpServer tcpServer;
    private TcpClient tcpClient;
    /** The mutual-TLS mode's key exchanges (listening on the TCP port); null otherwise. */
    private final io.homa.internal.tls.KeyExchange keyExchange;

    private EngineLoops(ShellConfig config, int serial, InboundRequest.Factory requests, CallObserver observer) {
        this.config = config;
        this.pspState = config.secured() ? new io.homa.core.psp.PspReceiveState(config.security()) : null;
        this.serial = serial;
        this.requests = requests;
        this.observer = observer;
        this.transport = new Transport(config);
        this.loops = new EngineLoop[config.eventLoops()];
        this.keyExchange = config.tls() == null ? null : new io.homa.internal.tls.KeyExchange(config.tls(),
                config.security(), loops.length, tcpCounters, config.failures());
        this.dispatcher = Dispatcher.create(config, serial); // its threads start with its first task
        this.peers = config.tcpFallback() ? new PeerPaths(config, tcpCounters) : null;
        this.tcpServer = config.tcpFallback() ? new TcpServer(config, this, dispatcher, tcpCounters) : null;
        if (keyExchange != null && tcpServer != null) { // the fallback's calls come over TLS, through its listener
            keyExchange.serveFallbackWith(tcpServer::serveTls);
        }
        // Last: the group holds file descriptors (each loop's epoll instance) from here on, and
        // only close() gives them back; whatever may refuse the configuration above holds none.
        this.group = transport.newGroup(loops.length, serial, loopThreads, this::busyChoice);
    }

    /**
     * The shell of socket number {@code serial}, not yet bound ({@link #open}): its owner keeps it
     * before any request can reach {@code requests}, which may ask it back.
     */
    public static EngineLoops create(ShellConfig config, int serial, InboundRequest.Factory requests,
                                     CallObserver observer) {
        return new EngineLoops(config, serial, requests, observer);
    }

    /**
     * Binds the port and starts reading (once, on the creating thread); closes the shell if that
     * fails, whatever the failure (an {@code Error} too: the event loops and their file
     * descriptors are given back either way).
     *
     * @throws RuntimeException the API's IO_ERROR if the port cannot be bound
     */
    public void open() {
        try {
            bind();
        } catch (Throwable e) {
            try {
                close();
            } catch (Throwable inClose) {
                if (inClose != e) { // the JVM may throw one preallocated OutOfMemoryError twice
                    e.addSuppressed(inClose);
                }
            }
            throw e;
        }
        JfrEvents.opened(this);
    }

    /** Creates the engines, binds every channel on the one port, and starts reading. */
    private void bind() {
        EngineConfig base = config.engine();
        // One GSO send carries at most one UDP payload (64 KB) and 64 segments; sealed, each
        // segment is PSP's 32 bytes longer than the engine's datagram.
        int sealedDatagram = base.maxDatagram() + (config.secured() ? io.homa.core.psp.PspFormat.OVERHEAD : 0);
        int maxSegments = Math.max(1, Math.min(base.maxGsoSegments, Transport.MAX_UDP_PAYLOAD / sealedDatagram));
        // Zero-copy send gathers header and payload slices into a composite: epoll hands it to the
        // kernel as an iovec, but NIO's datagram channel first copies any composite into one direct
        // buffer, so there the engine's own single copy is cheaper.
        // Sealed, the cipher copies the payload anyway: the engine's copy into the plaintext buffer
        // is then the cheaper way to gather it (DatagramWriter).
        boolean inPlace = base.sendPayloadByReference && transport.epoll && !config.secured();
        SecureRandom random = new SecureRandom();
        Iterator<EventExecutor> executors = group.iterator();
        for (int i = 0; i < loops.length; i++) {
            EngineConfig ec = base.toBuilder().idShard(i, loops.length).maxGsoSegments(maxSegments)
                    .sendPayloadByReference(inPlace).build();
            loops[i] = new EngineLoop(this, (EventLoop) executors.next(), ec, random.nextLong(), dispatcher);
        }
        PortBinding ports = new PortBinding(config, transport, group, keyExchange != null ? keyExchange : tcpServer);
        channels = ports.bind(loops);
        localAddress = ports.localAddress();
        if (keyExchange != null) {
            keyExchange.start(localAddress.getPort());
        }
        if (config.tcpFallback()) {
            tcpClient = new TcpClient(config, transport, group, tcpCounters, localAddress,
                    keyExchange == null ? null : keyExchange.tlsContext());
        }
        for (int i = 0; i < loops.length; i++) {
            FaultInjector faults = config.faultInjection()
                    ? new FaultInjector(config.faultSeed() * 31 + i, config.dataFaults(), config.controlFaults()) : null;
            loops[i].attach(channels[i], transport.gso, faults, loops, config.callerSends(), config.callerSpin().toNanos(),
                    transport.readTakeover(loops[i].loop),
                    transport.gro ? GRO_DATAGRAM_BYTES
                            : config.engine().maxDatagram() + (config.secured() ? io.homa.core.psp.PspFormat.OVERHEAD : 0));
        }
        for (EngineLoop loop : loops) { // last: a loop reads as soon as its channels do
            loop.startReading();
        }
        log.debug("Homa socket {} open on {} ({}, {} event loop(s), {} socket(s) per loop, gso={}, gro={},"
                        + " receive batch {})", serial, localAddress, transport.name(), loops.length,
                ports.socketsPerLoop(), transport.gso, transport.gro, transport.receiveBatch);
    }

    /** What the transport choice came to (epoll or NIO, GSO, GRO): for tests that must know. */
    public Transport transport() {
        return transport;
    }

    /** Where user code runs, with the queue of requests waiting for the handler. */
    public Dispatcher dispatcher() {
        return dispatcher;
    }

    /** The channel of {@code loop} for priority {@code level}: for tests that read its options. */
    public Channel channel(int loop, int level) {
        return channels[loop][level];
    }

    @Override
    public InetSocketAddress localAddress() {
        return localAddress;
    }

    // ------------------------------------------------------------------ calls

    /** Starts a call (any thread): over Homa on one of the loops, or over TCP to a peer on TCP. */
    public void submit(ClientCall<?> c) {
        inFlight.add(c);
        if (closed.get()) {
            finishClosed(c, true);
            return;
        }
        EngineLoop loop = pickLoop();
        if (peers != null && peers.useTcp(c.server)) {
            callOverTcp(c, loop);
        } else {
            startOverHoma(c, loop);
        }
    }

    /** Starts a call over Homa, at once or (mutual TLS, no keys for its server yet) after the key exchange. */
    private void startOverHoma(ClientCall<?> c, EngineLoop loop) {
        if (keyExchange != null && !keyExchange.peers().canSendTo(c.server)) {
            startWhenSecured(c, loop);
        } else {
            c.startOn(loop.calls); // cancelling its future aborts the RPC (the server learns of it when it next asks)
        }
    }

    /**
     * Starts a call once this socket holds keys for its server (the mutual-TLS mode: the first call
     * to a peer waits for the key exchange, a few round trips over TCP); fails it with the API's
     * AUTHENTICATION_FAILED when the exchange does. Nothing of the request is sent before.
     */
    private void startWhenSecured(ClientCall<?> c, EngineLoop loop) {
        // The call's deadline bounds its wait for keys too (the exchange itself goes on, for later calls).
        ScheduledFuture<?> timer = loop.loop.schedule(() -> {
            if (c.isDone()) { // cancelled while it waited
                abandonWaiting(c);
            } else if (forget(c)) {
                c.releaseOwner();
                tcpCounters.incrementAndGet(ShellCounter.CALLS_FAILED.ordinal());
                tcpCounters.incrementAndGet(ShellCounter.CALLS_DEADLINE_EXPIRED.ordinal());
                dispatcher.execute(() -> c.fail(config.failures().create(Failure.TIMEOUT, c + ": the TLS key exchange"
                        + " with " + c.server + " did not finish within the call's deadline of " + c.deadline
                        + "; nothing of the request was sent")));
            }
        }, Math.max(0, c.deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        keyExchange.secure(c.server).whenComplete((v, error) -> {
            timer.cancel(false);
            if (!inFlight.contains(c)) { // timed out while it waited (or its TCP attempt did)
                c.releaseOwner();
                return;
            }
            if (c.isDone()) { // cancelled while it waited: no RPC to start
                abandonWaiting(c);
                return;
            }
            if (error == null && !closed.get()) {
                c.startOn(loop.calls);
            } else if (closed.get()) {
                finishClosed(c, true);
            } else if (forget(c)) {
                c.releaseOwner();
                tcpCounters.incrementAndGet(ShellCounter.CALLS_FAILED.ordinal());
                RuntimeException failure = error instanceof RuntimeException r ? r
                        : config.failures().create(Failure.AUTHENTICATION_FAILED, c + ": " + error, error);
                dispatcher.execute(() -> c.fail(failure));
            }
        });
    }

    /** A call cancelled before it reached an engine: forgotten, its buffer released, counted as cancelled. */
    private void abandonWaiting(ClientCall<?> c) {
        if (forget(c)) {
            c.releaseOwner();
            tcpCounters.incrementAndGet(ShellCounter.CALLS_CANCELLED.ordinal());
        }
    }

    /** Requests by their client's verified identity: counted as each request is made. */
    private final io.homa.internal.observe.IdentityCounts identityCounts = new io.homa.internal.observe.IdentityCounts();

    /** Counts one request of {@code identity} (null: a plain socket's, not counted). */
    public void countRequestOf(String identity) {
        identityCounts.count(identity);
    }

    /**
     * The verified identity of the peer at {@code peer} ({@code HomaRequest.peerIdentity()}): its
     * certificate's subject (mutual TLS), the configured name (pre-shared keys), or null when the
     * socket is not secured or the peer unknown.
     */
    public String peerIdentity(InetSocketAddress peer) {
        if (keyExchange != null) {
            return keyExchange.peers().identity(peer);
        }
        return config.peerName();
    }

    @Override
    public String identityAt(InetSocketAddress peer) {
        return keyExchange == null ? null : keyExchange.peers().identity(peer);
    }

    /** The TLS session of the key exchange with {@code peer} (mutual TLS), else null. */
    public javax.net.ssl.SSLSession tlsSession(InetSocketAddress peer) {
        return keyExchange == null ? null : keyExchange.peers().tlsSession(peer);
    }

    /** The mutual-TLS mode's record of peers' keys and SPIs; null in the other modes. */
    public io.homa.internal.tls.PeerKeys peerKeys() {
        return keyExchange == null ? null : keyExchange.peers();
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
            if (l.loop.inEventLoop() || l.inEngine()) {
                return l;
            }
        }
        return loops[nextLoop.getAndIncrement() & (loops.length - 1)];
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
                tcpCounters.incrementAndGet(ShellCounter.CALLS_FAILED.ordinal());
                tcpCounters.incrementAndGet(ShellCounter.CALLS_DEADLINE_EXPIRED.ordinal());
                dispatcher.execute(() -> c.fail(config.failures().create(Failure.TIMEOUT, c + " over TCP: no response"
                        + " within its deadline of " + c.deadline)));
            }
        }, Math.max(0, remaining), TimeUnit.NANOSECONDS);
        c.whenComplete((v, e) -> timer.cancel(false));
        ByteBuf body = c.requestForTcp();
        tcpClient.send(c.server, 0, 0, body).whenComplete((reply, error) -> {
            if (error != null) {
                if (isOpen() && inFlight.contains(c)) {
                    log.debug("{}: TCP failed ({}); trying Homa", c, error.toString());
                    peers.offTcp(c.server);
                    timer.cancel(false);
                    startOverHoma(c, loop);
                } else {
                    c.releaseOwner();
                }
                return;
            }
            c.releaseOwner();
            if (forget(c)) {
                RuntimeException failure = tcpClient.failure(c, reply);
                tcpCounters.incrementAndGet((failure == null ? ShellCounter.CALLS_SUCCEEDED
                        : ShellCounter.CALLS_FAILED).ordinal());
                dispatcher.execute(() -> TcpClient.complete(c, reply, failure));
            }
        });
    }

    /** Busy polling's question, on a loop before its select: sleep for a spinning caller, skip the select, or select now? */
    private int busyChoice() {
        for (EngineLoop l : loops) {
            if (l != null && l.loop.inEventLoop()) {
                return l.busyChoice();
            }
        }
        return 0;
    }

    /**
     * Entries into an engine by a thread that did not hold its engine lock, over all loops: 0
     * unless the shell has a bug (for tests: the engine must never have two threads in it).
     */
    public long unguardedEntries() {
        long n = 0;
        for (EngineLoop l : loops) {
            if (l != null) {
                n += l.unguardedEntries();
            }
        }
        return n;
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
    @Override
    public CompletableFuture<Boolean> claimForTcp(InetSocketAddress client, long rpcId) {
        CompletableFuture<Boolean> all = CompletableFuture.completedFuture(true);
        for (EngineLoop l : loops) {
            all = all.thenCompose(ok -> ok && l.fallback != null ? l.fallback.claimForTcp(client, rpcId)
                    : CompletableFuture.completedFuture(false));
        }
        return all;
    }

    /** Closes the UDP sockets only, so that this socket serves over TCP alone: for tests of the fallback. */
    public void closeUdpForTests() {
        for (Channel[] byLevel : channels) {
            for (Channel ch : byLevel) {
                ch.close().awaitUninterruptibly();
            }
        }
    }

    /** Takes a call from the calls in flight; true if this caller is the one to complete it. */
    boolean forget(ClientCall<?> c) {
        return inFlight.forget(c);
    }

    /**
     * Fails a call because the socket is closed, unless someone completed it already.
     *
     * @param releaseOwner whether to release the call's buffer now (once only, whoever else
     *                     releases it too: {@link ClientCall#releaseOwner})
     */
    void finishClosed(ClientCall<?> c, boolean releaseOwner) {
        if (forget(c)) {
            if (releaseOwner) {
                c.releaseOwner();
            }
            dispatcher.execute(() -> c.fail(config.failures().create(Failure.SOCKET_CLOSED, c + " failed: the socket "
                    + localAddress + " is closed")));
        }
    }

    // ------------------------------------------------------------------ serving

    /** Answers requests with {@code handler} from now on (any thread). */
    public void serve(RequestHandler handler) {
        this.handler = handler;
    }

    @Override
    public RequestHandler handler() {
        return handler;
    }

    @Override
    public InboundRequest.Factory requests() {
        return requests;
    }

    // ------------------------------------------------------------------ metrics and snapshots

    /** The socket's counters, summed over its loops and the TCP fallback's threads. */
    public MetricsSnapshot metrics() {
        MetricsSnapshot m = new MetricsSnapshot();
        onEveryLoop(l -> {
            synchronized (m) { // the loops add at the same time
                l.addMetrics(m);
            }
        });
        for (int i = 0; i < m.shell.length; i++) {
            m.shell[i] += tcpCounters.get(i);
        }
        m.shell[ShellCounter.EXECUTOR_HANDOFFS.ordinal()] += dispatcher.handoffs();
        m.shell[ShellCounter.CALLER_COMPLETIONS.ordinal()] += dispatcher.callerCompletions();
        dispatcher.addQueueDelays(m.queueDelays);
        m.queuedRequests = dispatcher.queuedRequests();
        if (peers != null) {
            m.shell[ShellCounter.PEERS_ON_TCP.ordinal()] = peers.size();
        }
        m.transport = transport.name();
        m.requestsByPeerIdentity = identityCounts.snapshot();
        return m;
    }

    /** Every live RPC of every loop, oldest first per loop. */
    @Override
    public List<RpcState> rpcStates() {
        List<RpcState> all = new ArrayList<>();
        onEveryLoop(l -> {
            List<RpcState> mine = new ArrayList<>();
            l.rpcs(mine);
            synchronized (all) { // the loops run these at the same time
                all.addAll(mine);
            }
        });
        return all;
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
            if (group.isTerminated() || l.loop.inEventLoop() || l.inEngine()) {
                l.locked(() -> action.accept(l));
                continue;
            }
            try {
                pending.add(l.loop.submit(() -> l.locked(() -> action.accept(l))));
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

    // ------------------------------------------------------------------ close

    @Override
    public boolean isOpen() {
        return !closed.get();
    }

    /**
     * Fails pending calls, drops open requests, frees every buffer, closes the channels and stops
     * the threads, waiting for them unless called from one of them. Idempotent.
     */
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        // On a loop of ours, or in a caller's turn (holding an engine's lock, which a loop may wait
        // for): never wait for a loop. Elsewhere every wait below ends within CLOSE_WAIT_MILLIS.
        boolean onOwnLoop = false;
        for (EngineLoop l : loops) {
            onOwnLoop |= l != null && (l.loop.inEventLoop() || l.inEngine());
        }
        long giveUp = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_WAIT_MILLIS);
        long waitUntil = onOwnLoop ? System.nanoTime() : giveUp;
        if (tcpClient != null) {
            tcpClient.close(waitUntil);
        }
        if (tcpServer != null) {
            tcpServer.close(waitUntil);
        }
        if (keyExchange != null) {
            keyExchange.close(waitUntil);
        }
        JfrEvents.closed(this);
        for (EngineLoop l : loops) {
            if (l == null) {
                continue;
            }
            if (l.loop.inEventLoop() || l.inEngine()) {
                l.closeOnLoop();
            } else {
                try {
                    l.loop.execute(l::closeOnLoop);
                } catch (RejectedExecutionException e) {
                    // already shutting down
                }
            }
        }
        if (!onOwnLoop) { // the loops close their channels first (io_uring: asynchronously)
            List<io.netty.channel.ChannelFuture> closing = new ArrayList<>();
            for (EngineLoop l : loops) {
                if (l != null) {
                    l.closeFutures(closing);
                }
            }
            io.homa.internal.transport.ChannelClosing.await(closing, giveUp);
        }
        group.shutdownGracefully(0, CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        if (onOwnLoop) {
            group.terminationFuture().addListener(f -> afterTermination(false));
        } else {
            long left = Math.max(1, TimeUnit.NANOSECONDS.toMillis(giveUp - System.nanoTime()));
            if (!group.terminationFuture().awaitUninterruptibly(left)) {
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
        inFlight.close(c -> finishClosed(c, true));
        dispatcher.shutdown(wait ? CLOSE_WAIT_MILLIS : 0);
        log.debug("Homa socket {} on {} closed", serial, localAddress);
    }
}
