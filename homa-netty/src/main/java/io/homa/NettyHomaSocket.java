package io.homa;

import io.homa.core.ReceivedMessage;
import io.homa.core.RpcState;
import io.homa.internal.Addresses;
import io.homa.internal.ShellConfig;
import io.homa.internal.loop.EngineLoops;
import io.homa.internal.observe.MetricsSnapshot;
import io.homa.internal.rpc.CallObserver;
import io.homa.internal.rpc.ClientCall;
import io.homa.internal.udp.NettyPayloadMemory;
import io.netty.buffer.ByteBuf;
import io.netty.util.ReferenceCountUtil;
import org.slf4j.LoggerFactory;

import javax.management.ObjectName;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The {@link HomaSocket}: validates arguments on the caller's thread, turns them into the shell's
 * calls, and hands them to its I/O shell ({@link EngineLoops}, in the non-exported
 * {@code io.homa.internal} packages). The shell knows nothing of this API: it reaches the
 * application only through the narrow interfaces given to it here (the handler, the request
 * factory of {@code ServerRequest}s, the call observer and the exception factory {@link Errors}).
 */
final class NettyHomaSocket implements HomaSocket, CallObserver {
    private static final AtomicInteger SERIAL = new AtomicInteger();

    private final HomaConfig config;
    private final int serial;
    private final EngineLoops shell;
    /** Rarely changed, read at every completed call: copy on write. */
    private final List<CallListener> callListeners = new CopyOnWriteArrayList<>();
    /** This socket's MBean when {@link HomaJmx#AUTO_REGISTER_PROPERTY} registered it, else null. */
    private volatile ObjectName jmxName;

    private NettyHomaSocket(HomaConfig config) {
        this.config = config;
        this.serial = SERIAL.incrementAndGet();
        // Made first, opened (bound, reading) second: a request that arrives as soon as the port
        // is bound (its peers may be sending already) finds the shell its factory asks.
        this.shell = EngineLoops.create(shellConfig(config), serial, this::request, this);
        shell.open();
    }

    /**
     * A request for the handler, with its client's verified identity (counted by identity): that
     * of the TLS connection it came over (the TCP fallback of a mutual-TLS socket), else that of
     * the peer's keys.
     */
    private ServerRequest request(io.homa.internal.rpc.InboundRequest.Path path, long id,
                                  InetSocketAddress peer, io.homa.core.ReceivedMessage message) {
        javax.net.ssl.SSLSession connection = path.tlsSession();
        String identity = connection != null ? io.homa.internal.tls.TlsContext.identityOf(connection)
                : shell.peerIdentity(peer);
        shell.countRequestOf(identity);
        return new ServerRequest(path, id, peer, message, identity);
    }

    static NettyHomaSocket open(HomaConfig config) {
        NettyHomaSocket s = new NettyHomaSocket(config);
        s.jmxName = HomaJmx.autoRegister(s, s.serial);
        return s;
    }

    /** What the shell is told of a configuration. */
    static ShellConfig shellConfig(HomaConfig c) {
        int[] tos = new int[io.homa.core.wire.WireFormat.PRIORITY_LEVELS];
        for (int level = 0; level < tos.length; level++) {
            tos[level] = c.tos(level);
        }
        return new ShellConfig(c.engineConfig(), c.bindAddress(), c.eventLoops(), c.requestTimeout(),
                c.maxCallsPerServer(), c.maxQueuedRequests(), c.queueTarget(), c.queueInterval(), c.executor(), c.executorThreads(), c.inlineExecution(),
                c.prioritySockets(), tos, c.receiveBatch(), c.gso(), c.gro(), c.busyPoll(), c.callerSends(), c.callerSpin(), c.callerReads(), c.nativeTransport(),
                c.ioTransport().name(), c.receiveBufferBytes(), c.sendBufferBytes(), c.tcpFallback(),
                c.probeInterval(), c.fallbackPeriod(), c.tcpConnectionsPerPeer(), c.tcpIdleTimeout(), c.faultSeed(),
                c.dataFaults(), c.controlFaults(), Errors::create,
                masterKeys(c.security()), c.security() == null ? null : c.security().peerName(),
                c.security() == null || !c.security().isMutualTls() ? null
                        : new io.homa.internal.TlsSettings(c.security().keyManager(), c.security().trustManager(),
                        c.security().rotateEvery(), c.security().cipher().pspVersion),
                c.security() == null ? null : c.security().cipherProvider());
    }

    /** The master keys a secured socket opens with: the ring's (pre-shared), or its own at random (mutual TLS). */
    private static io.homa.core.psp.PspMasterKeys masterKeys(HomaSecurity s) {
        if (s == null) {
            return null;
        }
        if (!s.isMutualTls()) {
            return s.keys().masterKeys();
        }
        byte[] k = io.homa.internal.tls.KeyExchange.newMasterKey();
        io.homa.core.psp.PspMasterKeys keys = new io.homa.core.psp.PspMasterKeys(s.cipher().pspVersion, k);
        java.util.Arrays.fill(k, (byte) 0);
        return keys;
    }

    /** The shell under this socket: for tests that look at its transport, channels or executor. */
    EngineLoops shell() {
        return shell;
    }

    @Override
    public InetSocketAddress localAddress() {
        return shell.localAddress();
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
        return call(server, request, deadline, false);
    }

    @Override
    public CompletableFuture<byte[]> call(InetSocketAddress server, byte[] request, CallOptions options) {
        if (options == null) {
            throw new HomaBadArgumentException("options must not be null (use CallOptions.DEFAULT)");
        }
        return call(server, request, options.deadline() == null ? config.defaultDeadline() : options.deadline(),
                options.idempotent());
    }

    private CompletableFuture<byte[]> call(InetSocketAddress server, byte[] request, Duration deadline,
                                           boolean idempotent) {
        if (request == null) {
            throw new HomaBadArgumentException("request must not be null (use new byte[0] for an empty one)");
        }
        InetSocketAddress to = Addresses.normalise(server);
        long deadlineAt = check(to, request.length, deadline);
        ClientCall<byte[]> c = new ClientCall<>(to, request, null, deadline, deadlineAt,
                idempotent || config.idempotentCalls(), NettyHomaSocket::toByteArray);
        shell.submit(c);
        return c;
    }

    @Override
    public CompletableFuture<ByteBuf> call(InetSocketAddress server, ByteBuf request) {
        return call(server, request, config.defaultDeadline());
    }

    @Override
    public CompletableFuture<ByteBuf> call(InetSocketAddress server, ByteBuf request, Duration deadline) {
        return call(server, request, deadline, false);
    }

    @Override
    public CompletableFuture<ByteBuf> call(InetSocketAddress server, ByteBuf request, CallOptions options) {
        if (options == null) {
            ReferenceCountUtil.safeRelease(request);
            throw new HomaBadArgumentException("options must not be null (use CallOptions.DEFAULT)");
        }
        return call(server, request, options.deadline() == null ? config.defaultDeadline() : options.deadline(),
                options.idempotent());
    }

    private CompletableFuture<ByteBuf> call(InetSocketAddress server, ByteBuf request, Duration deadline,
                                            boolean idempotent) {
        if (request == null) {
            throw new HomaBadArgumentException("request must not be null (use Unpooled.EMPTY_BUFFER for an empty one)");
        }
        try {
            InetSocketAddress to = Addresses.normalise(server);
            long deadlineAt = check(to, request.readableBytes(), deadline);
            ClientCall<ByteBuf> c = new ClientCall<>(to, null, request, deadline,
                    deadlineAt, idempotent || config.idempotentCalls(), NettyPayloadMemory::toByteBuf);
            shell.submit(c);
            return c;
        } catch (RuntimeException e) {
            ReferenceCountUtil.safeRelease(request);
            throw e;
        }
    }

    /**
     * A response for the {@code byte[]} API, its memory given back: the array it was assembled in
     * (the call asked for one: {@code ClientCall.responseAsArray}), else its one copy.
     */
    private static byte[] toByteArray(ReceivedMessage m) {
        return m.takeByteArray();
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
        String unreachable = Addresses.unreachable(shell.localAddress(), server);
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
        return System.nanoTime() + ClientCall.cappedNanos(deadline);
    }

    // ------------------------------------------------------------------ serving

    @Override
    public void serve(HomaHandler handler) {
        if (handler == null) {
            throw new HomaBadArgumentException("handler must not be null");
        }
        shell.serve(r -> handler.handle((ServerRequest) r));
    }

    // ------------------------------------------------------------------ metrics

    @Override
    public HomaMetrics metrics() {
        MetricsSnapshot m = shell.metrics();
        return new HomaMetrics(m.counters, m.drops, m.shell, m.activeClientRpcs, m.activeServerRpcs, m.gauges,
                m.transport, m.queueDelays, m.queuedRequests, m.requestsByPeerIdentity);
    }

    @Override
    public javax.net.ssl.SSLSession tlsSession(InetSocketAddress peer) {
        if (peer == null) {
            throw new HomaBadArgumentException("peer must not be null");
        }
        return shell.tlsSession(Addresses.normalise(peer));
    }

    @Override
    public List<RpcInfo> rpcs() {
        List<RpcState> states = shell.rpcStates();
        List<RpcInfo> out = new ArrayList<>(states.size());
        for (RpcState r : states) {
            String identity = shell.peerIdentity(r.peer());
            out.add(new RpcInfo(r.id(), r.peer(), r.client() ? RpcInfo.Role.CLIENT : RpcInfo.Role.SERVER, r.state(),
                    r.outLength(), r.outSent(), r.outGranted(), r.inLength(), r.inReceived(), r.inGranted(),
                    r.gaps(), r.priority(), r.silentTicks(), Duration.ofNanos(r.ageNanos()), identity));
        }
        return List.copyOf(out);
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

    @Override
    public boolean observing() {
        return !callListeners.isEmpty();
    }

    /** Tells every listener (on the event loop that ran the call); one that throws is logged and skipped. */
    @Override
    public void callEnded(InetSocketAddress server, int requestBytes, int responseBytes, long durationNanos) {
        for (CallListener l : callListeners) {
            try {
                l.callEnded(server, requestBytes, responseBytes, durationNanos);
            } catch (RuntimeException ex) {
                LoggerFactory.getLogger(NettyHomaSocket.class).warn("Homa call listener {} failed", l, ex);
            }
        }
    }

    // ------------------------------------------------------------------ close

    @Override
    public boolean isOpen() {
        return shell.isOpen();
    }

    @Override
    public void close() {
        ObjectName registered = jmxName;
        jmxName = null; // two closing threads at once: at most one sees it
        try {
            if (registered != null) {
                HomaJmx.unregister(registered);
            }
        } finally {
            shell.close(); // idempotent; the socket closes even if JMX refused to let go of its MBean
        }
    }

    @Override
    public String toString() {
        return "HomaSocket#" + serial + "{" + shell.localAddress() + ", " + shell.transport().name()
                + (shell.isOpen() ? "" : ", closed") + "}";
    }
}
