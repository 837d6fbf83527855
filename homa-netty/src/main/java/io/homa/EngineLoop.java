package io.homa;

import io.homa.HomaMetrics.Shell;
import io.homa.core.Counter;
import io.homa.core.EngineConfig;
import io.homa.core.EngineEvent;
import io.homa.core.HomaEngine;
import io.homa.core.RpcError;
import io.homa.core.RpcIds;
import io.homa.core.RpcState;
import io.homa.core.Transmit;
import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketDecoder;
import io.homa.core.wire.WireFormat;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.DatagramPacket;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.collection.LongObjectHashMap;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Drives one {@link HomaEngine} from one Netty event loop: the only thread that ever touches the
 * engine. It feeds the engine received datagrams, the clock and the application's commands, and
 * after each input drains the engine's events (to futures and handlers, via the
 * {@link Dispatcher}) and datagrams (to the {@link DatagramWriter}, flushed once per batch), then
 * re-arms the one timer at the engine's next deadline (only when that moved earlier; a spurious
 * timer is harmless). It also enforces each call's deadline and each request's timeout.
 *
 * <p>Received datagrams go to the engine in the order the {@link ReceiveDrain} chooses: control
 * packets and short messages as they are read, long messages' data in large datagrams after the
 * loop's current I/O round. The engine is drained once per read batch
 * ({@code channelReadComplete}) and once after the deferred data. With several event loops on one port, a datagram about one
 * of our client RPCs (odd sender id) that the kernel delivered to another loop is passed to the
 * loop whose engine owns the RPC (its index is in the id's low bits).
 *
 * <p>Buffers: every {@code ByteBuf} the user handed over ({@code call}/{@code reply} variants) is
 * kept here until the engine says it stopped reading it, then released; {@link #closeOnLoop}
 * releases the rest. Received payloads are the engine's through {@link NettyPayloadMemory}
 * (retained datagram slices, pooled chunks) until it delivers them; a response then belongs to
 * its call (released if nobody takes it), a request to its {@link ServerRequest} (released when
 * answered or dropped; requests still open at close are dropped here).
 */
final class EngineLoop implements ServerRequest.Path {
    private static final Logger log = LoggerFactory.getLogger(EngineLoop.class);

    final EventLoop loop;
    private final NettyHomaSocket socket;
    private final HomaEngine engine;
    private final EngineConfig engineConfig;
    private final Dispatcher dispatcher;
    private final long requestTimeoutNanos;
    private final long[] shell = new long[Shell.values().length];
    /** Our client calls in the engine, by RPC id (primitive keys: no boxing per call). */
    private final LongObjectHashMap<ClientCall<?>> calls = new LongObjectHashMap<>();
    /** The deadlines of the calls started here and the timeouts of the requests received here. */
    private final DeadlineQueue deadlines;
    /** Counts a request whose handler never ran (made once, not per request). */
    private final Runnable requestSkipped;
    private final IdentityHashMap<ByteBuffer, ByteBuf> ownedPayloads = new IdentityHashMap<>();
    private final DroppedRequests dropped;
    private final NettyPayloadMemory memory = new NettyPayloadMemory();
    /** The newest request handed to the handler and not yet answered or dropped (a list through the requests). */
    private ServerRequest newestOpen;
    private final List<Channel> channels = new ArrayList<>();
    private final CommandQueue commands;
    private final CallWindows windows;
    /** Host SRPT: the order in which received datagrams reach the engine. */
    private final ReceiveDrain receiveDrain;
    private DatagramWriter writer;
    private EngineLoop[] siblings = {this};
    /**
     * TCP fallback (null when off): for each peer with Homa calls of ours in flight, {calls, when
     * a datagram from it last came}. A call is retried over TCP only if its peer stayed silent.
     */
    private final Map<InetSocketAddress, long[]> heard;
    /** TCP fallback (null when off): requests received over Homa, remembered against TCP retries. */
    private final DroppedRequests delivered;
    private final long probeNanos;

    private ScheduledFuture<?> timer;
    private long timerDeadline = Long.MAX_VALUE;
    private boolean draining;
    private boolean drainAgain;
    private boolean readPending;
    private volatile boolean closed;

    EngineLoop(NettyHomaSocket socket, EventLoop loop, EngineConfig engineConfig, long seed, Dispatcher dispatcher) {
        this.socket = socket;
        this.loop = loop;
        this.engineConfig = engineConfig;
        this.engine = new HomaEngine(engineConfig, seed);
        this.dispatcher = dispatcher;
        this.requestTimeoutNanos = socket.config().requestTimeout().toNanos();
        long retryWindow = (engineConfig.maxRestarts + 1L) * engineConfig.timeoutTicks * engineConfig.tickNanos;
        this.dropped = new DroppedRequests(Math.max(TimeUnit.SECONDS.toNanos(1), retryWindow));
        engine.setPayloadReleaseListener(this::payloadReleased);
        engine.setPayloadMemory(memory);
        engine.setObserver(JfrEvents.observer(rpcId -> {
            ClientCall<?> c = calls.get(rpcId);
            return c == null ? 0 : c.startedNanos;
        }));
        this.commands = new CommandQueue(loop, this::runCommands);
        this.deadlines = new DeadlineQueue(loop);
        this.requestSkipped = () -> runOnLoop(() -> shell[Shell.REQUESTS_SKIPPED.ordinal()]++);
        this.windows = new CallWindows(socket.config().maxCallsPerServer());
        this.receiveDrain = new ReceiveDrain(this::onDatagram, loop, this::onReadComplete,
                engineConfig.unscheduledLimit(), ReceiveDrain.MIN_BULK_DATAGRAM_BYTES, ReceiveDrain.MAX_DEFERRED_BYTES,
                shell);
        boolean fallback = socket.config().tcpFallback();
        this.heard = fallback ? new HashMap<>() : null;
        this.delivered = fallback ? new DroppedRequests(TcpFrames.retryWindowNanos(socket.config())) : null;
        this.probeNanos = socket.config().probeInterval().toNanos();
    }

    /**
     * Gives this loop its channels (the one of each priority level) once they are bound, on the
     * opening thread before they start reading (which then happens on the loop, after this).
     */
    void attach(Channel[] byLevel, boolean gso, FaultInjector faults, EngineLoop[] siblings) {
        for (Channel ch : byLevel) {
            if (!channels.contains(ch)) {
                channels.add(ch);
            }
        }
        this.siblings = siblings;
        memory.allocator(byLevel[0].alloc());
        int reserve = engineConfig.maxDatagram() * engineConfig.maxGsoSegments;
        this.writer = new DatagramWriter(byLevel, gso, faults, loop, shell, reserve);
    }

    /** A new inbound handler for one of this loop's channels. */
    Inbound newInbound() {
        return new Inbound();
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    // ------------------------------------------------------------------ hand-offs into the loop

    /**
     * Runs {@code command} on the loop: directly if already there, else through the command
     * queue. A command must cope with running after close (it then only fails or releases), and
     * may even run on the closing thread once the loop has ended ({@link #runLeftoverCommands}).
     */
    private void runOnLoop(Runnable command) {
        if (loop.inEventLoop()) {
            command.run();
        } else {
            commands.submit(command);
        }
    }

    /** Starts a call (any thread); the call is its own command, so this costs no lambda. */
    void call(ClientCall<?> c) {
        runOnLoop(c);
    }

    /** The caller cancelled {@code c}'s future (any thread): abort its RPC. */
    void cancel(ClientCall<?> c) {
        runOnLoop(() -> cancelled(c));
    }

    @Override
    public void reply(ServerRequest r, ByteBuffer payload, ByteBuf owner) {
        if (loop.inEventLoop()) {
            respond(r, payload, owner); // an inline handler: no lambda
        } else {
            commands.submit(() -> respond(r, payload, owner));
        }
    }

    @Override
    public void dropRequest(ServerRequest r, String why) {
        if (r.markDropped()) {
            runOnLoop(() -> dropOnLoop(r, why));
        }
    }

    /** Runs a batch of queued commands, then drains the engine once for all of them. */
    private void runCommands() {
        if (draining) { // cannot happen (a task never runs inside a drain), but stay correct
            commands.runAll();
            return;
        }
        draining = true;
        try {
            commands.runAll();
        } finally {
            draining = false;
        }
        drain();
    }

    /** Runs commands the loop never got to; only after the loop has terminated. */
    void runLeftoverCommands() {
        commands.runAll();
    }

    // ------------------------------------------------------------------ inputs, on the loop

    /** Starts a call, on the loop (its {@link ClientCall#run}). */
    void start(ClientCall<?> c) {
        if (closed) {
            socket.finishClosed(c, true);
            return;
        }
        long remaining = c.deadlineNanos - System.nanoTime();
        if (remaining <= 0) {
            refuse(c, new HomaTimeoutException(c + ": deadline of " + c.deadline + " passed before it started"));
            return;
        }
        deadlines.add(c);
        if (windows.admit(c)) {
            if (!launch(c)) {
                releaseSlot(c.server);
            }
        } else {
            shell[Shell.CALLS_QUEUED.ordinal()]++;
        }
        drain();
    }

    /** Hands an admitted call to the engine; false (and the call failed) if the engine refused it. */
    private boolean launch(ClientCall<?> c) {
        long id;
        ByteBuffer[] parts = c.payload == null ? c.owner.nioBuffers() : null; // read in place, never gathered
        try {
            id = parts == null ? engine.startRequest(System.nanoTime(), c.server, c.payload)
                    : engine.startRequestInParts(System.nanoTime(), c.server, parts);
        } catch (IllegalStateException e) {
            endTimers(c);
            refuse(c, new HomaException(HomaException.Kind.RESOURCE_LIMIT, c + " refused: " + e.getMessage()));
            return false;
        } catch (IllegalArgumentException e) {
            endTimers(c);
            refuse(c, new HomaMessageTooLargeException(c + " refused: " + e.getMessage()));
            return false;
        }
        if (c.owner != null) {
            ownedPayloads.put(parts == null ? c.payload : parts[0], c.owner);
        }
        c.rpcId = id;
        calls.put(id, c);
        shell[Shell.CALLS_STARTED.ordinal()]++;
        if (heard != null) {
            watch(c);
        }
        return true;
    }

    /** Takes a client call out of {@link #calls} (null if it is not there). */
    private ClientCall<?> removeCall(long rpcId) {
        ClientCall<?> c = calls.remove(rpcId);
        if (c != null && heard != null) {
            long[] w = heard.get(c.server);
            if (w != null && --w[0] == 0) {
                heard.remove(c.server);
            }
        }
        return c;
    }

    // ------------------------------------------------------------------ TCP fallback

    /** Arms the probe of a call just handed to the engine: silence from its peer until then means TCP. */
    private void watch(ClientCall<?> c) {
        long now = System.nanoTime();
        c.launchedAt = now;
        heard.computeIfAbsent(c.server, k -> new long[]{0, now - Long.MAX_VALUE / 4})[0]++;
        c.probe = loop.schedule(() -> probeExpired(c), probeNanos, TimeUnit.NANOSECONDS);
    }

    /**
     * A call's probe interval passed. If its peer sent nothing since the call started, Homa does
     * not reach it: retry the call over TCP, naming its Homa RPC so that the server runs it only if
     * it did not get it over Homa. The Homa RPC goes on until the TCP answer comes.
     */
    private void probeExpired(ClientCall<?> c) {
        c.probe = null;
        if (closed || calls.get(c.rpcId) != c) {
            return;
        }
        long[] w = heard.get(c.server);
        if (w != null && w[1] - c.launchedAt > 0) {
            return; // the peer answers Homa: never TCP
        }
        shell[Shell.FALLBACKS.ordinal()]++;
        log.debug("{}: no Homa packet from its server within {}; retrying over TCP", c, socket.config().probeInterval());
        ByteBuf body = c.owner != null ? c.owner.retainedDuplicate() : Unpooled.wrappedBuffer(c.payload.duplicate());
        socket.tcpClient().send(c.server, c.rpcId, System.nanoTime() - c.launchedAt, body)
                .whenComplete((reply, error) -> runOnLoop(() -> retried(c, reply, error)));
    }

    /** The TCP retry of {@code c} ended: with the server's answer, or {@code error}. */
    private void retried(ClientCall<?> c, TcpFrames.Reply reply, Throwable error) {
        if (error != null) {
            log.debug("{}: TCP retry failed ({}); the call goes on over Homa", c, error.toString());
            socket.peers().offTcp(c.server);
            return;
        }
        if (reply.status() == TcpFrames.REFUSED) {
            // The request got there over Homa: the way back may still work (a slow start), so the
            // peer goes on TCP only if this call then times out (see dispatch).
            shell[Shell.FALLBACKS_REFUSED.ordinal()]++;
            c.fallbackRefused = true;
            log.debug("{}: TCP retry refused ({}); the call goes on over Homa", c, reply.reason());
            return;
        }
        socket.peers().onTcp(c.server); // it answers TCP where Homa stayed silent
        if (closed || calls.get(c.rpcId) != c) {
            return; // finished meanwhile (its server ran it over TCP only: Homa's copy is dropped there)
        }
        removeCall(c.rpcId);
        endTimers(c);
        engine.abort(System.nanoTime(), c.rpcId); // releases the payload through the engine
        HomaException failure = TcpClient.failure(c, reply);
        if (failure == null) {
            shell[Shell.CALLS_SUCCEEDED.ordinal()]++;
            if (socket.forget(c)) {
                dispatcher.execute(() -> TcpClient.complete(c, reply, null));
            }
        } else {
            fail(c, failure);
        }
        releaseSlot(c.server);
        drain();
    }

    /**
     * Serving side: may the TCP retry of {@code client}'s Homa RPC {@code rpcId} run? Not if this
     * loop received that request over Homa; if it may, a Homa copy arriving later is dropped.
     */
    CompletableFuture<Boolean> claimForTcp(InetSocketAddress client, long rpcId) {
        CompletableFuture<Boolean> claimed = new CompletableFuture<>();
        runOnLoop(() -> {
            long now = System.nanoTime();
            if (closed || delivered == null || delivered.contains(now, client, rpcId)) {
                claimed.complete(false);
            } else {
                dropped.add(now, client, rpcId);
                claimed.complete(true);
            }
        });
        return claimed;
    }

    /** A call to {@code server} left the engine: let the next waiting one in. */
    private void releaseSlot(InetSocketAddress server) {
        ClientCall<?> next;
        while ((next = windows.release(server)) != null) {
            if (launch(next)) {
                return;
            }
        }
    }

    private void cancelled(ClientCall<?> c) {
        if (closed || !socket.forget(c)) {
            return; // already finished (or the close path owns it)
        }
        endTimers(c);
        shell[Shell.CALLS_CANCELLED.ordinal()]++;
        if (windows.removeWaiting(c)) {
            c.releaseOwner(); // never reached the engine
            return;
        }
        if (c.rpcId != 0 && removeCall(c.rpcId) == c) {
            engine.abort(System.nanoTime(), c.rpcId); // releases the payload through the engine
            releaseSlot(c.server);
            drain();
        }
    }

    /** Takes a call's deadline and TCP probe off the loop. */
    private void endTimers(ClientCall<?> c) {
        deadlines.remove(c);
        c.cancelProbe();
    }

    /** A call's deadline passed (its {@link DeadlineQueue.Entry#deadlinePassed}). */
    void deadlinePassed(ClientCall<?> c) {
        if (closed) {
            return;
        }
        if (windows.removeWaiting(c)) {
            shell[Shell.CALLS_DEADLINE_EXPIRED.ordinal()]++;
            refuse(c, new HomaTimeoutException(c + ": no response within its deadline of " + c.deadline
                    + " (it waited for one of the " + socket.config().maxCallsPerServer()
                    + " slots per server all along)"));
            return;
        }
        if (removeCall(c.rpcId) != c) {
            return;
        }
        engine.abort(System.nanoTime(), c.rpcId);
        shell[Shell.CALLS_DEADLINE_EXPIRED.ordinal()]++;
        fail(c, new HomaTimeoutException(c + ": no response within its deadline of " + c.deadline));
        releaseSlot(c.server);
        drain();
    }

    private void respond(ServerRequest r, ByteBuffer payload, ByteBuf owner) {
        cancelExpiry(r);
        if (closed) {
            ReferenceCountUtil.safeRelease(owner);
            return;
        }
        untrack(r);
        ByteBuffer[] parts = payload == null ? owner.nioBuffers() : null; // read in place, never gathered
        ByteBuffer key = parts == null ? payload : parts[0];
        if (owner != null) {
            ownedPayloads.put(key, owner);
        }
        boolean sent = false;
        RuntimeException refused = null;
        try {
            long now = System.nanoTime();
            sent = parts == null ? engine.respond(now, r.peer(), r.rpcId, payload)
                    : engine.respondInParts(now, r.peer(), r.rpcId, parts);
        } catch (RuntimeException e) { // a limit of the engine (e.g. its outgoing bytes)
            refused = e;
        }
        if (sent) {
            shell[Shell.REQUESTS_REPLIED.ordinal()]++;
        } else {
            if (owner != null) {
                ownedPayloads.remove(key);
                owner.release();
            }
            if (refused == null) {
                log.debug("reply to {} discarded: the RPC is gone (client aborted or vanished)", r);
            } else {
                log.warn("reply to {} refused by the engine: {}; the request is dropped", r, refused.getMessage());
                dropOnLoop(r, "its reply was refused: " + refused.getMessage());
                return;
            }
        }
        drain();
    }

    private void dropOnLoop(ServerRequest r, String why) {
        cancelExpiry(r);
        if (closed) {
            return;
        }
        untrack(r);
        long now = System.nanoTime();
        log.debug("{} dropped: {}", r, why);
        shell[Shell.REQUESTS_DROPPED.ordinal()]++;
        dropped.add(now, r.peer(), r.rpcId);
        abandon(now, r.peer(), r.rpcId);
        drain();
    }

    /**
     * Frees a server RPC in the engine (counted as SERVER_RPCS_ABANDONED). The client learns of it
     * when it next asks: RPC_UNKNOWN, and its request restarts.
     */
    private void abandon(long now, InetSocketAddress client, long rpcId) {
        engine.abandon(now, client, rpcId);
    }

    /** {@code r} went to its handler: it must be answered or dropped, at the latest at close. */
    private void track(ServerRequest r) {
        r.olderOpen = newestOpen;
        if (newestOpen != null) {
            newestOpen.newerOpen = r;
        }
        newestOpen = r;
        r.tracked = true;
    }

    /** {@code r} was answered or dropped (a no-op if it was never tracked, or was already untracked). */
    private void untrack(ServerRequest r) {
        if (!r.tracked) {
            return;
        }
        r.tracked = false;
        if (r.olderOpen != null) {
            r.olderOpen.newerOpen = r.newerOpen;
        }
        if (r.newerOpen != null) {
            r.newerOpen.olderOpen = r.olderOpen;
        } else {
            newestOpen = r.olderOpen;
        }
        r.olderOpen = null;
        r.newerOpen = null;
    }

    private void cancelExpiry(ServerRequest r) {
        deadlines.remove(r);
    }

    private void onDatagram(DatagramPacket p) {
        ByteBuffer bytes = p.content().nioBuffer();
        if (siblings.length > 1) {
            EngineLoop owner = owner(bytes);
            if (owner != this) {
                owner.commands.submit(() -> owner.forwarded(p, bytes));
                return;
            }
        }
        try {
            receive(p, bytes);
        } finally {
            p.release(); // a message kept from it holds a retained slice
        }
    }

    /** A datagram another loop of this socket read for one of our client RPCs. */
    private void forwarded(DatagramPacket p, ByteBuffer bytes) {
        try {
            receive(p, bytes);
        } finally {
            p.release();
        }
        drain();
    }

    /** Feeds one datagram to the engine; {@code bytes} is its only view (one leak-detector record). */
    private void receive(DatagramPacket p, ByteBuffer bytes) {
        InetSocketAddress from = p.sender();
        int n = bytes.remaining();
        shell[Shell.DATAGRAMS_RECEIVED.ordinal()]++;
        boolean data = PacketDecoder.isData(bytes);
        shell[(data ? Shell.BYTES_RECEIVED_DATA : Shell.BYTES_RECEIVED_CONTROL).ordinal()] += n;
        if (closed) {
            return;
        }
        readPending = true;
        if (heard != null && !heard.isEmpty()) {
            long[] w = heard.get(from);
            if (w != null) {
                w[1] = System.nanoTime();
            }
        }
        memory.receiving(p.content(), bytes);
        try {
            engine.onDatagram(System.nanoTime(), from, bytes);
        } catch (RuntimeException e) { // the engine validates everything: this is a bug, but not the peer's win
            shell[Shell.DATAGRAMS_DROPPED.ordinal()]++;
            log.warn("Homa engine failed on a {}-byte datagram from {}; dropped", n, from, e);
        } finally {
            memory.receiving(null, null);
        }
    }

    /** The loop whose engine owns the RPC a datagram is about (ours unless it names our client RPC). */
    private EngineLoop owner(ByteBuffer bytes) {
        if (bytes.remaining() < WireFormat.COMMON_HEADER) {
            return this;
        }
        long senderId = bytes.getLong(bytes.position() + WireFormat.OFF_SENDER_ID);
        if (RpcIds.isClientId(senderId)) {
            return this; // about a request: a server RPC, kept by the loop that reads that peer
        }
        return siblings[RpcIds.shard(senderId, siblings.length)];
    }

    private void onReadComplete() {
        if (readPending) {
            readPending = false;
            drain();
        }
    }

    private void onTimer() {
        timer = null;
        timerDeadline = Long.MAX_VALUE;
        if (closed) {
            return;
        }
        engine.onTimer(System.nanoTime());
        drain();
    }

    // ------------------------------------------------------------------ outputs

    /**
     * Drains the engine's events and datagrams until it has neither, flushes the writes, and
     * re-arms the timer. Re-entrant calls (an inline handler replying) only ask the running
     * drain to go round again.
     */
    private void drain() {
        if (draining) {
            drainAgain = true;
            return;
        }
        if (closed) {
            return;
        }
        draining = true;
        try {
            // Netty runs scheduled tasks only between batches of other work, so a busy loop may
            // run the timer late: serve a passed deadline here too (an early call is harmless).
            long now = System.nanoTime();
            long deadline = engine.nextDeadline();
            if (deadline != Long.MAX_VALUE && now - deadline >= 0) {
                engine.onTimer(now);
            }
            do {
                drainAgain = false;
                EngineEvent e;
                while ((e = engine.pollEvent()) != null) {
                    dispatch(e);
                    engine.recycle(e); // dispatch kept nothing of it but its message
                }
                transmit();
            } while ((drainAgain || engine.hasEvents()) && !closed);
            if (!closed) {
                writer.flush();
                armTimer();
            }
        } finally {
            draining = false;
        }
    }

    private void transmit() {
        long now = System.nanoTime();
        while (writer.writable()) {
            Transmit t = engine.pollTransmit(now, writer.reserve());
            if (t == null) {
                return;
            }
            writer.send(t, t.payloadByReference() ? ownedPayloads.get(t.payload()) : null);
        }
    }

    private void armTimer() {
        long deadline = engine.nextDeadline();
        if (deadline == Long.MAX_VALUE || deadline >= timerDeadline) {
            return;
        }
        if (timer != null) {
            timer.cancel(false);
        }
        timerDeadline = deadline;
        long delay = Math.max(0, deadline - System.nanoTime());
        timer = loop.schedule(this::onTimer, delay, TimeUnit.NANOSECONDS);
    }

    private void dispatch(EngineEvent e) {
        switch (e.kind()) {
            case RESPONSE -> {
                ClientCall<?> c = removeCall(e.rpcId());
                if (c == null) {
                    e.message().release(); // cannot happen (an ended call's RPC was aborted), but stay exact
                    return;
                }
                endTimers(c);
                shell[Shell.CALLS_SUCCEEDED.ordinal()]++;
                callEnded(c, e.message().length());
                if (socket.forget(c)) {
                    dispatcher.succeed(c, e.message());
                } else {
                    e.message().release(); // the close path finished the call
                }
                releaseSlot(c.server);
            }
            case FAILED -> {
                ClientCall<?> c = removeCall(e.rpcId());
                if (c != null) {
                    endTimers(c);
                    if (c.fallbackRefused && e.error() == RpcError.TIMEOUT) {
                        socket.peers().onTcp(c.server); // its requests arrive, its answers do not
                    }
                    if (e.error() == RpcError.OVERLOADED) {
                        shell[Shell.CALLS_OVERLOADED.ordinal()]++;
                    }
                    fail(c, toException(c, e.error()));
                    releaseSlot(c.server);
                }
            }
            case REQUEST -> onRequest(e);
        }
    }

    private void onRequest(EngineEvent e) {
        long now = System.nanoTime();
        if (delivered != null) {
            delivered.add(now, e.peer(), e.rpcId());
        }
        ServerRequest r = new ServerRequest(this, e.rpcId(), e.peer(), e.message(), engineConfig.maxMessageLength);
        HomaHandler handler = socket.handler();
        if (handler == null || dropped.contains(now, e.peer(), e.rpcId())) {
            r.markDropped();
            dropOnLoop(r, handler == null ? "no handler is set (serve() not called)" : "dropped before, retried");
            return;
        }
        if (!dispatcher.admitRequest()) {
            refuseOverloaded(now, r);
            return;
        }
        shell[Shell.REQUESTS_HANDLED.ordinal()]++;
        track(r);
        r.expiresAt = now + requestTimeoutNanos;
        deadlines.add(r);
        dispatcher.runHandler(handler, r, r.expiresAt, requestSkipped);
    }

    /**
     * Refuses a request without running its handler: the queue of requests waiting for one is
     * full. The engine frees the RPC and tells the client with an OVERLOADED packet, on which the
     * client's engine fails the call ({@link RpcError#OVERLOADED}). The request is not remembered
     * as dropped: should the packet be lost, the client's retry is judged afresh.
     */
    private void refuseOverloaded(long now, ServerRequest r) {
        r.markDropped();
        shell[Shell.REQUESTS_OVERLOADED.ordinal()]++;
        log.debug("{} refused: {} requests wait for the handler already", r, socket.config().maxQueuedRequests());
        engine.rejectOverloaded(now, r.peer(), r.rpcId);
    }

    private static HomaException toException(ClientCall<?> c, RpcError error) {
        return switch (error) {
            case TIMEOUT -> new HomaTimeoutException(c + (c.fallbackRefused
                    ? ": no Homa answer came back, though the server received the request over Homa (it said so"
                    + " over TCP, and did not run it again there: it may have run once)"
                    : ": the server was silent for too long (it is gone, unreachable or overloaded)"));
            case OVERLOADED -> new HomaOverloadedException(c + " refused by the server: more than its maxQueuedRequests"
                    + " requests wait for its handler; it did not run this one (retry later)");
            case PEER_UNKNOWN_RPC -> new HomaUnknownRpcException(c + ": the server does not know this RPC, even"
                    + " after sending it again (it restarted, or its handler failed or never replied)");
        };
    }

    private void fail(ClientCall<?> c, HomaException ex) {
        shell[Shell.CALLS_FAILED.ordinal()]++;
        callEnded(c, -1);
        if (socket.forget(c)) {
            dispatcher.execute(() -> c.fail(ex));
        }
    }

    /** Fails a call the engine never took: its buffer is still ours to release. */
    private void refuse(ClientCall<?> c, HomaException ex) {
        c.releaseOwner();
        fail(c, ex);
    }

    private void payloadReleased(ByteBuffer payload) {
        ByteBuf owner = ownedPayloads.remove(payload);
        if (owner != null) {
            owner.release();
        }
    }

    // ------------------------------------------------------------------ close and metrics

    /**
     * Fails every call with {@code why}, releases every buffer, cancels the timers and closes the
     * channels. On the loop; idempotent.
     */
    void closeOnLoop() {
        if (closed) {
            return;
        }
        closed = true;
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
        deadlines.close();
        for (ClientCall<?> c : calls.values()) {
            endTimers(c);
            shell[Shell.CALLS_FAILED.ordinal()]++;
            shell[Shell.CALLS_CLOSED.ordinal()]++;
            socket.finishClosed(c, false); // its buffer is among ownedPayloads
        }
        calls.clear();
        windows.clear(c -> {
            endTimers(c);
            shell[Shell.CALLS_FAILED.ordinal()]++;
            shell[Shell.CALLS_CLOSED.ordinal()]++;
            socket.finishClosed(c, true); // never reached the engine: its buffer is still ours
        });
        commands.runAll(); // queued calls and replies: they see the socket closed and give up
        receiveDrain.close();
        for (ServerRequest r = newestOpen; r != null; r = r.olderOpen) {
            r.tracked = false;
            r.markDropped(); // unanswered: its bytes are released (a late reply is discarded)
        }
        newestOpen = null;
        engine.close(); // received payloads not yet delivered
        for (ByteBuf b : ownedPayloads.values()) {
            b.release();
        }
        ownedPayloads.clear();
        if (writer != null) {
            writer.close();
        }
        for (Channel ch : channels) {
            ch.close();
        }
    }

    /** Tells the socket's call listeners that {@code c} ended ({@code responseBytes} -1: failed). */
    private void callEnded(ClientCall<?> c, int responseBytes) {
        List<CallListener> listeners = socket.callListeners();
        if (listeners.isEmpty()) {
            return;
        }
        long duration = System.nanoTime() - c.startedNanos;
        for (CallListener l : listeners) {
            try {
                l.callEnded(c.server, c.length, responseBytes, duration);
            } catch (RuntimeException ex) {
                log.warn("Homa call listener {} failed", l, ex);
            }
        }
    }

    /** A snapshot of this engine's live RPCs (on the loop); empty once closed. */
    List<RpcInfo> rpcs() {
        if (closed) {
            return List.of();
        }
        List<RpcState> states = new ArrayList<>();
        engine.rpcs(System.nanoTime(), states);
        List<RpcInfo> out = new ArrayList<>(states.size());
        for (RpcState r : states) {
            out.add(new RpcInfo(r.id(), r.peer(), r.client() ? RpcInfo.Role.CLIENT : RpcInfo.Role.SERVER, r.state(),
                    r.outLength(), r.outSent(), r.outGranted(), r.inLength(), r.inReceived(), r.inGranted(),
                    r.gaps(), r.priority(), r.silentTicks(), Duration.ofNanos(r.ageNanos())));
        }
        return out;
    }

    /** Adds this loop's counters to the arrays (on the loop). */
    void addMetrics(long[] counters, long[] drops, long[] shellOut, int[] active, long[] gauges) {
        for (Counter c : Counter.values()) {
            counters[c.ordinal()] += engine.counter(c);
        }
        for (DropReason r : DropReason.values()) {
            drops[r.ordinal()] += engine.drops(r);
        }
        for (int i = 0; i < shell.length; i++) {
            shellOut[i] += shell[i];
        }
        shellOut[Shell.LOOP_HANDOFFS.ordinal()] += commands.handoffs();
        active[0] += engine.liveClientRpcs();
        active[1] += engine.liveServerRpcs();
        gauges[HomaMetrics.BUFFERED] += engine.bufferedBytes();
        gauges[HomaMetrics.OUTGOING] += engine.outgoingBytes();
        gauges[HomaMetrics.INCOMING] += engine.incomingBytes();
        gauges[HomaMetrics.PEERS] += engine.peers();
    }

    /**
     * The one view of a user buffer's readable bytes for the engine, or null if it has several
     * parts (a composite): the engine then reads {@code nioBuffers()} in place. Never a copy.
     */
    static ByteBuffer viewOf(ByteBuf buf) {
        return buf.nioBufferCount() > 1 ? null : buf.nioBuffer();
    }

    /** Reads datagrams of one channel into the engine; events end up in the loop's drain. */
    final class Inbound extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof DatagramPacket p) {
                receiveDrain.offer(p);
            } else {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            onReadComplete();
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable()) {
                drain();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            shell[Shell.IO_ERRORS.ordinal()]++;
            if (!closed) {
                log.debug("Homa socket {}: I/O error", ctx.channel().localAddress(), cause);
            }
        }
    }
}
