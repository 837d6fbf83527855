package io.homa.internal.tls;

import io.homa.core.psp.PspKeyDerivation;
import io.homa.core.psp.PspMasterKeys;
import io.homa.core.psp.PspSendKey;
import io.homa.internal.Addresses;
import io.homa.internal.Failure;
import io.homa.internal.TlsSettings;
import io.homa.internal.observe.ShellCounter;
import io.homa.internal.transport.TcpListener;
import io.homa.internal.transport.Transport;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Agrees PSP keys with peers over mutual TLS 1.3 (the mutual-TLS mode of a secured socket):
 * listens on TCP at the socket's port number, and before the first call to a peer without keys
 * connects to the peer's. The same listener takes the TCP fallback's connections, told apart by
 * ALPN ({@link TlsContext}) and handed to the fallback's server once verified. Once the handshake has verified both certificates, each side sends
 * HELLO (its UDP port and event loops), answers the other's HELLO with KEYS (one SPI per event
 * loop of the other side, issued under its own master key, and their derived keys) and the
 * other's KEYS with READY ({@link KeyFrames}). A side can seal to its peer once it installed the
 * peer's KEYS and got READY for its own: then both can open what the other sends. The
 * connection stays up: a rotation of a side's master key sends fresh KEYS over it; when it
 * closes, both sides forget the keys it brought and the next call exchanges anew.
 *
 * <p>The socket's own master keys never leave it; a peer gets only keys derived for SPIs issued
 * to it, bound to its UDP address ({@link PeerKeys}). Threads: each connection runs on one of
 * the socket's event loops; {@link #secure} may be called from any thread.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class KeyExchange implements TcpListener {
    private static final Logger log = LoggerFactory.getLogger(KeyExchange.class);
    /** A TCP connect that takes longer than this fails the exchange (the handshake has its own, as long). */
    static final int TIMEOUT_MILLIS = 10_000;

    /**
     * Most TLS handshakes under way on the listener at once: beyond, it stops accepting until one
     * ends (connections wait in the kernel's backlog), so unverified connections cost a bounded
     * amount of CPU and memory.
     */
    static final int MAX_HANDSHAKES = 64;
    /**
     * Most of those from one source address: more are closed at once (counted as refused), so
     * that one host cannot take the listener's every handshake and keep other peers out.
     */
    static final int MAX_HANDSHAKES_PER_SOURCE = 16;

    /** Serves a TCP fallback connection whose TLS handshake verified its client (on its event loop). */
    @FunctionalInterface
    public interface FallbackServer {
        void serve(Channel connection, javax.net.ssl.SSLSession session);
    }

    private final TlsSettings tls;
    private final PspMasterKeys keys;
    private final PeerKeys peers = new PeerKeys();
    private final int loops;
    private final AtomicLongArray counters;
    private final Failure.Factory failures;
    private final TlsContext tlsContext;
    private volatile FallbackServer fallback;
    private final SecureRandom random = new SecureRandom();
    private final ConcurrentHashMap<InetSocketAddress, CompletableFuture<Void>> exchanges = new ConcurrentHashMap<>();
    private final Set<Session> sessions = ConcurrentHashMap.newKeySet();
    /**
     * Accepted connections whose handshake is under way. Changed on the connections' loops under
     * {@code handshakeLock}, with the listener's auto-read, so that the two never disagree.
     */
    private int handshaking;
    private final java.util.Map<InetAddress, Integer> handshakingBySource = new java.util.HashMap<>();
    private final Object handshakeLock = new Object();
    /** Accepted connections, whatever they became: closed with the socket. */
    private final Set<Channel> accepted = ConcurrentHashMap.newKeySet();
    /** The listener, once bound (closed by {@link #close()}). */
    private volatile Channel listener;
    private volatile EventLoopGroup group;
    private volatile Transport transport;
    private volatile int udpPort;
    private volatile boolean closed;
    private ScheduledFuture<?> rotation;

    /**
     * @param keys     this socket's own master keys (the receive side's), made at random
     * @param loops    this socket's event loops: a peer issues one SPI to each
     * @param counters where the exchanges count (the socket's shared counters of non-loop work)
     */
    public KeyExchange(TlsSettings tls, PspMasterKeys keys, int loops, AtomicLongArray counters, Failure.Factory failures) {
        this.tls = tls;
        this.keys = keys;
        this.loops = loops;
        this.counters = counters;
        this.failures = failures;
        this.tlsContext = new TlsContext(tls, failures);
    }

    /** The TLS side of this socket's connections, for the TCP fallback's client too. */
    public TlsContext tlsContext() {
        return tlsContext;
    }

    /**
     * Where accepted connections that carry the TCP fallback's calls go (ALPN
     * {@link TlsContext#FALLBACK}); without one (fallback off) they are refused. Set before
     * {@link #bind}.
     */
    public void serveFallbackWith(FallbackServer server) {
        this.fallback = server;
    }

    /** A fresh master key of 32 random bytes, for a socket's slot. */
    public static byte[] newMasterKey() {
        byte[] k = new byte[PspKeyDerivation.MASTER_KEY_BYTES];
        new SecureRandom().nextBytes(k);
        return k;
    }

    /** What the exchanges came to: the shell seals and opens with it. */
    public PeerKeys peers() {
        return peers;
    }

    /** Listens for key exchanges on {@code address} (the port the UDP sockets then join). */
    @Override
    public Channel bind(EventLoopGroup group, Transport transport, InetSocketAddress address) {
        this.group = group;
        this.transport = transport;
        ServerBootstrap b = new ServerBootstrap().group(group)
                .channelFactory(transport::newServerSocketChannel)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        accepted.add(ch);
                        ch.closeFuture().addListener(f -> accepted.remove(ch));
                        InetAddress source = ((InetSocketAddress) ch.remoteAddress()).getAddress();
                        if (closed || !handshakeStarted(ch.parent(), source)) {
                            ch.close();
                            return;
                        }
                        SslHandler ssl = tlsContext.server(fallback != null);
                        ssl.handshakeFuture().addListener(h -> handshakeEnded(ch.parent(), source));
                        ch.pipeline().addLast(ssl, new Route());
                    }
                });
        ChannelFuture f = b.bind(address).awaitUninterruptibly();
        if (!f.isSuccess()) {
            throw failures.create(Failure.IO_ERROR,
                    "cannot listen for TLS key exchanges on TCP " + address + ": " + f.cause(), f.cause());
        }
        listener = f.channel();
        return f.channel();
    }

    /**
     * Counts a handshake from {@code source} as under way, unless that source has
     * {@link #MAX_HANDSHAKES_PER_SOURCE} under way already (then false: refused and counted). At
     * {@link #MAX_HANDSHAKES} under way, the listener stops accepting (counted).
     */
    private boolean handshakeStarted(Channel listener, InetAddress source) {
        synchronized (handshakeLock) {
            int fromSource = handshakingBySource.getOrDefault(source, 0);
            if (fromSource >= MAX_HANDSHAKES_PER_SOURCE) {
                counters.incrementAndGet(ShellCounter.TLS_REFUSED.ordinal());
                log.debug("TLS connection from {} refused: {} handshakes from there under way", source, fromSource);
                return false;
            }
            handshakingBySource.put(source, fromSource + 1);
            if (++handshaking == MAX_HANDSHAKES) {
                counters.incrementAndGet(ShellCounter.TLS_ACCEPTS_PAUSED.ordinal());
                listener.config().setAutoRead(false);
            }
            return true;
        }
    }

    /** A handshake succeeded, failed, timed out or lost its connection: below the limit, accept again. */
    private void handshakeEnded(Channel listener, InetAddress source) {
        synchronized (handshakeLock) {
            handshakingBySource.computeIfPresent(source, (k, n) -> n == 1 ? null : n - 1);
            if (handshaking-- == MAX_HANDSHAKES) {
                listener.config().setAutoRead(true);
            }
        }
    }

    /** Starts rotating, once the socket's UDP port is known (after {@link #bind}). */
    public void start(int udpPort) {
        this.udpPort = udpPort;
        long period = tls.rotateEvery().toMillis();
        rotation = group.next().scheduleAtFixedRate(this::rotate, period, period, TimeUnit.MILLISECONDS);
    }

    /**
     * Completes once this socket can seal to {@code peer} (its UDP address), at once when it can
     * already; else after an exchange, the one under way or a new one. Fails with the API's
     * AUTHENTICATION_FAILED when the exchange does (untrusted certificate, no secured socket
     * there, a broken exchange). Any thread.
     */
    public CompletableFuture<Void> secure(InetSocketAddress peer) {
        if (peers.canSendTo(peer)) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> before = exchanges.putIfAbsent(peer, mine);
        if (before != null) {
            return before;
        }
        mine.whenComplete((v, e) -> exchanges.remove(peer, mine));
        if (closed) {
            mine.completeExceptionally(failures.create(Failure.SOCKET_CLOSED, "the socket is closed"));
            return mine;
        }
        Session s = new Session(peer, mine);
        Bootstrap b = new Bootstrap().group(group).channelFactory(transport::newSocketChannel)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, TIMEOUT_MILLIS)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        pipeline(ch, s);
                    }
                });
        b.connect(peer).addListener((ChannelFuture f) -> {
            if (!f.isSuccess()) {
                s.fail("cannot connect to its TLS key exchange on TCP " + peer + " (is it a mutual-TLS Homa socket?)",
                        f.cause());
            }
        });
        return mine;
    }

    /** A connection that dials a peer's key exchange. */
    private void pipeline(Channel ch, Session s) {
        ch.pipeline().addLast(tlsContext.client(s.dialed, TlsContext.KEY_EXCHANGE));
        addFrames(ch, s);
    }

    private static void addFrames(Channel ch, Session s) {
        ch.pipeline().addLast(new LengthFieldBasedFrameDecoder(KeyFrames.MAX_FRAME, 0, 2, 0, 2),
                new LengthFieldPrepender(2), s);
    }

    /**
     * An accepted connection until its handshake is done: then it becomes a key exchange or a TCP
     * fallback connection, as its ALPN name says, or is refused (a failed handshake, no name, or
     * fallback calls to a socket without the fallback).
     */
    private final class Route extends io.netty.channel.ChannelInboundHandlerAdapter {
        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (!(evt instanceof SslHandshakeCompletionEvent e)) {
                ctx.fireUserEventTriggered(evt);
                return;
            }
            Channel ch = ctx.channel();
            SslHandler ssl = ch.pipeline().get(SslHandler.class);
            String protocol = e.isSuccess() ? TlsContext.protocolOf(ssl) : "";
            FallbackServer server = fallback;
            if (e.isSuccess() && protocol.equals(TlsContext.KEY_EXCHANGE)) {
                ctx.pipeline().remove(this);
                addFrames(ch, new Session(null, null));
                ch.pipeline().fireUserEventTriggered(evt);
            } else if (e.isSuccess() && protocol.equals(TlsContext.FALLBACK) && server != null) {
                ctx.pipeline().remove(this);
                counters.incrementAndGet(ShellCounter.TLS_HANDSHAKES.ordinal());
                server.serve(ch, ssl.engine().getSession());
            } else { // stays, to take the handshake's exception too
                counters.incrementAndGet(ShellCounter.TLS_REFUSED.ordinal());
                log.debug("TLS connection from {} refused: {}", ch.remoteAddress(), !e.isSuccess() ? e.cause().toString()
                        : protocol.isEmpty() ? "it named no protocol (ALPN)" : "no TCP fallback on this socket");
                ch.close();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            // Not TLS, or a broken handshake: the handshake's event counts it.
            log.debug("TLS connection from {}: {}", ctx.channel().remoteAddress(), cause.toString());
            ctx.close();
        }
    }

    /**
     * Replaces this socket's master key: a new key in the other slot (which drops the key before
     * the current one; peers got SPIs under the current one at the last rotation), SPIs issued
     * from it from now on, and every peer gets fresh ones over its connection. Packets under the
     * current key still open until the next rotation.
     */
    synchronized void rotate() {
        if (closed) {
            return;
        }
        int slot = 1 - keys.sendSlot();
        byte[] k = newMasterKey();
        keys.install(slot, k);
        Arrays.fill(k, (byte) 0);
        keys.sendWith(slot);
        counters.incrementAndGet(ShellCounter.KEY_ROTATIONS.ordinal());
        for (Session s : sessions) {
            s.channel.eventLoop().execute(s::reissue);
        }
    }

    /** Stops rotating and closes every key-exchange connection (the socket is closing). */
    public void close(long giveUpNanos) {
        closed = true;
        if (rotation != null) {
            rotation.cancel(false);
        }
        java.util.List<ChannelFuture> closing = new java.util.ArrayList<>();
        Channel l = listener;
        if (l != null) {
            closing.add(l.close());
        }
        for (Session s : sessions) {
            closing.add(s.channel.close());
        }
        for (Channel ch : accepted) { // handshakes under way, fallback connections
            closing.add(ch.close());
        }
        // Closed before the event loops shut down (a channel closed by a loop's shutdown warns).
        io.homa.internal.transport.ChannelClosing.await(closing, giveUpNanos);
        for (CompletableFuture<Void> f : exchanges.values()) {
            f.completeExceptionally(failures.create(Failure.SOCKET_CLOSED, "the socket is closed"));
        }
    }

    /** One key-exchange connection, either side; runs on its channel's event loop. */
    private final class Session extends SimpleChannelInboundHandler<ByteBuf> {
        /** The peer's UDP address as dialed; null on the accepting side (learnt from HELLO). */
        final InetSocketAddress dialed;
        /** Completes when this side can seal to the peer; null on the accepting side. */
        final CompletableFuture<Void> ready;
        Channel channel;
        String identity;
        javax.net.ssl.SSLSession tlsSession;
        InetSocketAddress peer;
        boolean claimed;
        int peerLoops;
        boolean installed;
        boolean peerReady;
        /** SPIs issued to the peer under the current and the previous master key. */
        int[] current = new int[0];
        int[] previous = new int[0];

        Session(InetSocketAddress dialed, CompletableFuture<Void> ready) {
            this.dialed = dialed;
            this.ready = ready;
        }

        boolean initiator() {
            return dialed != null;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            // The dialing side's session is added before the connection is up, the accepting
            // side's once its handshake is done: both are a session from now until it closes.
            channel = ctx.channel();
            sessions.add(this);
            channel.closeFuture().addListener(f -> sessions.remove(this));
            if (closed) {
                ctx.close();
            }
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (!(evt instanceof SslHandshakeCompletionEvent e)) {
                ctx.fireUserEventTriggered(evt);
                return;
            }
            if (!e.isSuccess()) {
                counters.incrementAndGet(ShellCounter.TLS_REFUSED.ordinal());
                fail("the TLS handshake failed: " + e.cause().getMessage(), e.cause());
                ctx.close();
                return;
            }
            try {
                tlsSession = ctx.pipeline().get(SslHandler.class).engine().getSession();
                identity = tlsSession.getPeerPrincipal().getName();
            } catch (SSLException ex) {
                counters.incrementAndGet(ShellCounter.TLS_REFUSED.ordinal());
                fail("the peer presented no certificate", ex);
                ctx.close();
                return;
            }
            counters.incrementAndGet(ShellCounter.TLS_HANDSHAKES.ordinal());
            ctx.writeAndFlush(KeyFrames.hello(ctx.alloc(), tls.pspVersion(), udpPort, loops));
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
            if (identity == null || !frame.isReadable()) {
                refuse(ctx, "a key-exchange frame before the handshake, or an empty one");
                return;
            }
            switch (frame.readUnsignedByte()) {
                case KeyFrames.HELLO -> hello(ctx, frame);
                case KeyFrames.KEYS -> keys(ctx, frame);
                case KeyFrames.READY -> {
                    peerReady = true;
                    maybeReady();
                }
                default -> refuse(ctx, "an unknown key-exchange frame");
            }
        }

        private void hello(ChannelHandlerContext ctx, ByteBuf f) {
            if (peer != null || f.readableBytes() != 6) {
                refuse(ctx, "a second or malformed HELLO");
                return;
            }
            int protocol = f.readUnsignedByte();
            int psp = f.readUnsignedByte();
            int port = f.readUnsignedShort();
            int n = f.readUnsignedShort();
            if (protocol != KeyFrames.PROTOCOL_VERSION || psp != tls.pspVersion() || n < 1 || n > KeyFrames.MAX_LOOPS
                    || port == 0) {
                refuse(ctx, "a HELLO this socket cannot serve (protocol " + protocol + ", PSP version " + psp
                        + " where this socket uses " + tls.pspVersion() + ", " + n + " loops, port " + port + ")");
                return;
            }
            InetSocketAddress remote = Addresses.normalise((InetSocketAddress) ctx.channel().remoteAddress());
            InetSocketAddress at = initiator() ? Addresses.normalise(dialed) : new InetSocketAddress(remote.getAddress(), port);
            if (!peers.claim(at, identity, tlsSession)) {
                refuse(ctx, "another identity holds " + at + " (" + peers.identity(at) + "); refusing " + identity);
                return;
            }
            claimed = true;
            peer = at;
            peerLoops = n;
            reissue();
        }

        /** Issues the peer one fresh SPI per loop of its under the current master key, and sends them. */
        void reissue() {
            if (peer == null || !channel.isActive()) {
                return;
            }
            int[] spis = new int[peerLoops];
            byte[][] derived = new byte[peerLoops][];
            for (int i = 0; i < peerLoops; i++) {
                PspMasterKeys.SendKey k = keys.issue(random);
                spis[i] = k.spi();
                derived[i] = k.key();
                peers.bind(k.spi(), peer);
            }
            for (int spi : previous) {
                peers.unbind(spi);
            }
            previous = current;
            current = spis;
            counters.addAndGet(ShellCounter.KEYS_ISSUED.ordinal(), spis.length);
            channel.writeAndFlush(KeyFrames.keys(channel.alloc(), spis, derived));
            for (byte[] d : derived) {
                Arrays.fill(d, (byte) 0);
            }
        }

        private void keys(ChannelHandlerContext ctx, ByteBuf f) {
            if (peer == null || f.readableBytes() < 3) {
                refuse(ctx, "KEYS before HELLO, or a malformed one");
                return;
            }
            int n = f.readUnsignedShort();
            int keyLength = f.readUnsignedByte();
            if (n != loops || keyLength != PspKeyDerivation.keyBytes(tls.pspVersion())
                    || f.readableBytes() != n * (4 + keyLength)) {
                refuse(ctx, "KEYS for " + n + " loops of " + keyLength + "-byte keys, where this socket has "
                        + loops + " loops and " + PspKeyDerivation.keyBytes(tls.pspVersion()) + "-byte keys");
                return;
            }
            PspSendKey[] byLoop = new PspSendKey[n];
            byte[] key = new byte[keyLength];
            for (int i = 0; i < n; i++) {
                int spi = f.readInt();
                f.readBytes(key);
                byLoop[i] = new PspSendKey(spi, key);
            }
            Arrays.fill(key, (byte) 0);
            peers.install(peer, identity, byLoop, this);
            installed = true;
            ctx.writeAndFlush(KeyFrames.ready(ctx.alloc()));
            maybeReady();
        }

        private void maybeReady() {
            if (installed && peerReady && ready != null) {
                ready.complete(null);
            }
        }

        private void refuse(ChannelHandlerContext ctx, String why) {
            counters.incrementAndGet(ShellCounter.TLS_REFUSED.ordinal());
            log.debug("key exchange with {} ({}): {}", ctx.channel().remoteAddress(), identity, why);
            fail("the key exchange broke off: " + why, null);
            ctx.close();
        }

        void fail(String why, Throwable cause) {
            if (ready != null && !ready.isDone()) {
                ready.completeExceptionally(failures.create(Failure.AUTHENTICATION_FAILED,
                        "no keys with " + dialed + ": " + why, cause));
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (peer != null) {
                peers.forget(peer, this);
                if (claimed) {
                    peers.unclaim(peer);
                }
            }
            for (int spi : current) {
                peers.unbind(spi);
            }
            for (int spi : previous) {
                peers.unbind(spi);
            }
            fail("the peer closed the connection during the exchange (did it refuse our certificate?)", null);
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            log.debug("key exchange with {}: {}", ctx.channel().remoteAddress(), cause.toString());
            fail(cause.getMessage(), cause);
            ctx.close();
        }
    }
}
