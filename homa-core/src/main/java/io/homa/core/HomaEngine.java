package io.homa.core;

import io.homa.core.wire.DecodedPacket;
import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketDecoder;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;

/**
 * The Homa protocol for one socket, as a sans-IO state machine: no sockets, threads or clocks.
 *
 * <p>Inputs: {@link #onDatagram} (a received datagram), {@link #onTimer} (the current time, at or
 * after {@link #nextDeadline()}), and the application's commands {@link #startRequest},
 * {@link #respond} and {@link #abort}. Outputs: {@link #pollTransmit} (datagrams to send, grouped
 * for GSO), {@link #nextDeadline()} and {@link #pollEvent()} (requests, responses, failures).
 * After any input, drain {@code pollTransmit} and {@code pollEvent} and re-arm the timer.
 *
 * <p>Not thread-safe: one thread drives an engine. Time is any monotonic nanosecond clock, passed
 * in with every call. Bad datagrams are counted by {@link DropReason} and never throw.
 *
 * <p>This class wires the mechanisms together, one (package-private) file each, see
 * docs/protocol.md: the RPCs and peers ({@code RpcTable}), DATA in ({@code IncomingData}) and out
 * ({@code OutgoingData}), memory ({@code MemoryLimits}), grants ({@code GrantScheduler}), the
 * sender's order and pace ({@code SenderQueue}, {@code Pacer}), priorities ({@code Priorities}),
 * acks ({@code Acks}), the timer ({@code RpcTimer}), the answer to stray responses
 * ({@code StrayResponses}), the application's commands ({@code ApplicationCommands}), what is
 * sent first ({@code TransmitOrder}) and the answers about its state ({@code StateQueries}). What
 * is left here is dispatch: it checks the public inputs, hands each packet to its mechanism and
 * keeps the deadlines.
 */
public final class HomaEngine {
    private final EngineConfig cfg;
    private final EngineCounters counters = new EngineCounters();
    private final EngineEvents events = new EngineEvents();
    private final TickClock clock;
    private final GrantScheduler grants;
    private final MemoryLimits limits;
    private final RpcTable rpcs;
    private final Priorities priorities;
    private final Acks acks;
    private final IncomingData incoming;
    private final OutgoingData outgoing;
    private final RpcTimer timer;
    private final StrayResponses strays;
    private final ApplicationCommands commands;
    private final TransmitOrder transmitOrder;
    private final StateQueries state;
    /** Where each datagram is decoded (reused: the receive path allocates nothing). */
    private final DecodedPacket decoded = new DecodedPacket();
    /**
     * Most packets one datagram may hold: a GSO send or a GRO batch has at most 128 segments
     * (Linux's UDP_MAX_SEGMENTS), so one datagram never costs more than 128 packets' work.
     */
    static final int MAX_COALESCED_PACKETS = 128;
    /** Inside {@link #beginBatch()}: grants wait for {@link #endBatch()}. */
    private boolean inBatch;
    /**
     * When this engine's incarnation started (ns): when it could first receive (see
     * {@link #startReceiving}), or else its first datagram. RPC_UNKNOWN_SINCE tells a client the
     * time since.
     */
    private long receivingSince;
    private boolean receiving;
    /** This engine's incarnation: a random number, so that clients tell one start from the next. */
    private final long incarnation;

    /**
     * @param config the tunables
     * @param randomSeed the secret key of this engine's RPC ids, which are a keyed permutation of a
     *                   counter (use a secure random value in production, so that nobody can predict
     *                   the ids; a fixed one in simulations, to replay them)
     */
    public HomaEngine(EngineConfig config, long randomSeed) {
        this.cfg = Objects.requireNonNull(config, "config");
        this.clock = new TickClock(cfg.tickNanos);
        this.incarnation = new java.util.SplittableRandom(randomSeed ^ 0x696E6361726E6174L).nextLong();
        ControlPackets control = new ControlPackets(counters);
        this.grants = new GrantScheduler(cfg);
        SenderQueue senders = new SenderQueue(cfg.fifoSendOrderForTests);
        Pacer pacer = new Pacer(cfg);
        this.limits = new MemoryLimits(cfg, counters);
        this.rpcs = new RpcTable(cfg, randomSeed, clock, counters, events, grants, control, limits, senders,
                RpcTimer.roundTripCapTicks(cfg));
        this.priorities = new Priorities(cfg, counters, rpcs, control);
        this.acks = new Acks(cfg, counters, clock, rpcs, control);
        this.incoming = new IncomingData(cfg, counters, clock, rpcs, limits, grants, control, priorities, acks, events);
        this.outgoing = new OutgoingData(cfg, counters, rpcs, senders, pacer, priorities, acks, grants, control, limits);
        this.timer = new RpcTimer(cfg, counters, clock, rpcs, control, acks, priorities);
        this.strays = new StrayResponses(cfg, control);
        this.commands = new ApplicationCommands(cfg, counters, clock, rpcs, limits, outgoing, control, events);
        this.transmitOrder = new TransmitOrder(counters, control, senders, pacer, outgoing);
        this.state = new StateQueries(cfg, clock, rpcs, limits, grants, senders, control, events);
    }

    public EngineConfig config() { return cfg; }

    /**
     * Says that this engine can receive from {@code now} on (its socket is bound): its
     * incarnation starts then. A client whose RPC the engine does not know is told the time since
     * (RPC_UNKNOWN_SINCE), and sends a request that may have reached an earlier incarnation on the
     * same address again only if that was before its whole request left. So call it once the
     * socket is bound, never earlier (an earlier start could let a request run twice); without it
     * the first datagram's arrival counts, which is later, and only more cautious.
     *
     * @throws IllegalStateException if a datagram arrived already, or it was called before
     */
    public void startReceiving(long now) {
        if (receiving) {
            throw new IllegalStateException("the engine's incarnation started already, at " + receivingSince);
        }
        receiving = true;
        receivingSince = now;
    }

    /** Who hears when an outgoing payload is no longer read (see {@link PayloadReleaseListener}). */
    public void setPayloadReleaseListener(PayloadReleaseListener listener) {
        rpcs.setPayloadReleaseListener(listener);
    }

    /**
     * Where received payload memory comes from ({@link PayloadMemory#HEAP} by default). Set it
     * before the first datagram: a message keeps the memory it was started with.
     */
    public void setPayloadMemory(PayloadMemory memory) {
        incoming.setPayloadMemory(Objects.requireNonNull(memory, "memory"));
    }

    /** Who hears about single events (RESENDs, timeouts, restarts, completed RPCs); null for nobody. */
    public void setObserver(EngineObserver observer) {
        counters.observer = observer == null ? EngineObserver.NONE : observer;
    }

    // ------------------------------------------------------------------ application commands

    /**
     * Starts an RPC: queues {@code request} for {@code server}.
     *
     * <p>Back-pressure: the engine holds at most {@code maxRpcs} RPCs and at most
     * {@code maxOutgoingBytes} bytes of outgoing messages (requests and responses not yet released).
     * Beyond either limit this throws {@link EngineLimitException} and changes nothing; the caller
     * may try again once RPCs have finished. An I/O shell maps it to back-pressure or to a clear
     * error for the application.
     *
     * @param request the bytes between its position and limit; the engine reads them (absolute gets,
     *                position and limit untouched) until the RPC ends, so the caller must not change
     *                them before the response, failure or {@link #abort}
     * @return the RPC's id (even), named again in its RESPONSE or FAILED event
     * @throws IllegalArgumentException if the request is longer than {@code maxMessageLength} or
     *                                  than {@code maxOutgoingBytes} (it could never be sent)
     * @throws EngineLimitException if the engine holds {@code maxRpcs} RPCs already
     *                              ({@link EngineLimitException#limit()} {@code "maxRpcs"}), or the
     *                              request would take the outgoing bytes beyond
     *                              {@code maxOutgoingBytes} ({@code "maxOutgoingBytes"})
     */
    public long startRequest(long now, InetSocketAddress server, ByteBuffer request) {
        return startRequest(now, server, request, 0);
    }

    /**
     * {@link #startRequest(long, InetSocketAddress, ByteBuffer)} with a deadline: the time (on this
     * engine's clock, like {@code now}) after which the caller no longer waits, or 0 for none. Every
     * request DATA packet tells the server how long is left (whole milliseconds, up to about 4.7
     * hours; see docs/wire-format.md), so that it does not start work nobody waits for. The engine
     * itself does not end the RPC at the deadline: the caller does, with {@link #abort}.
     */
    public long startRequest(long now, InetSocketAddress server, ByteBuffer request, long deadline) {
        return startRequest(now, server, request, deadline, false);
    }

    /**
     * {@link #startRequest(long, InetSocketAddress, ByteBuffer, long)}, saying whether the request
     * is idempotent. Should the server answer that it does not know the RPC, a request that is not
     * is sent again only if the server cannot have run it (it never had the whole request, or it was
     * up all along: see docs/protocol.md, "Server restarts"); otherwise the RPC fails with
     * {@link RpcError#OUTCOME_UNKNOWN}. An idempotent one is sent again in any case.
     */
    public long startRequest(long now, InetSocketAddress server, ByteBuffer request, long deadline,
                             boolean idempotent) {
        Objects.requireNonNull(request, "request");
        return commands.startRequest(now, server, request, null, request.remaining(), deadline, idempotent);
    }

    /**
     * {@link #startRequest(long, InetSocketAddress, ByteBuffer, long, boolean)} for a request read
     * through calls ({@link OutgoingPayload}): no view object per message. The
     * {@link PayloadReleaseListener} is told about {@code request} itself.
     */
    public long startRequest(long now, InetSocketAddress server, OutgoingPayload request, long deadline,
                             boolean idempotent) {
        Objects.requireNonNull(request, "request");
        return commands.startRequest(now, server, null, null, request, request.payloadLength(), deadline, idempotent);
    }

    /**
     * {@link #startRequest(long, InetSocketAddress, ByteBuffer)} for a request in several parts,
     * sent in order and read in place (never gathered into one buffer). The
     * {@link PayloadReleaseListener} is told about {@code request[0]}.
     *
     * @param request at least one buffer; the array and the buffers are kept until the RPC ends
     */
    public long startRequestInParts(long now, InetSocketAddress server, ByteBuffer[] request) {
        return startRequestInParts(now, server, request, 0);
    }

    /** {@link #startRequestInParts(long, InetSocketAddress, ByteBuffer[])} with a deadline, as in {@link #startRequest(long, InetSocketAddress, ByteBuffer, long)}. */
    public long startRequestInParts(long now, InetSocketAddress server, ByteBuffer[] request, long deadline) {
        return startRequestInParts(now, server, request, deadline, false);
    }

    /** {@link #startRequestInParts(long, InetSocketAddress, ByteBuffer[], long)}, idempotent or not as in {@link #startRequest(long, InetSocketAddress, ByteBuffer, long, boolean)}. */
    public long startRequestInParts(long now, InetSocketAddress server, ByteBuffer[] request, long deadline,
                                    boolean idempotent) {
        Objects.requireNonNull(request, "request");
        return commands.startRequest(now, server, request.length == 0 ? null : request[0], request,
                OutgoingMessage.lengthOf(request), deadline, idempotent);
    }

    /**
     * Sends the response to a request delivered by a REQUEST event.
     *
     * <p>Back-pressure: if the response would take the engine's outgoing bytes beyond
     * {@code maxOutgoingBytes}, this throws {@link EngineLimitException} and changes nothing: the
     * request stays waiting for its response, so the caller may call {@code respond} again later
     * (once other RPCs have released their payloads) or give the RPC up with {@link #abandon}.
     *
     * @param response read as in {@link #startRequest} until the client acknowledges it
     * @return false if the RPC no longer exists (the client aborted or vanished) or was answered
     * @throws IllegalArgumentException if the response is longer than {@code maxMessageLength} or
     *                                  than {@code maxOutgoingBytes} (it could never be sent)
     * @throws EngineLimitException if the response would take the outgoing bytes beyond
     *                              {@code maxOutgoingBytes}
     */
    public boolean respond(long now, InetSocketAddress client, long rpcId, ByteBuffer response) {
        Objects.requireNonNull(response, "response");
        return commands.respond(now, client, rpcId, response, null, response.remaining());
    }

    /**
     * {@link #respond(long, InetSocketAddress, long, ByteBuffer)} for a response read through calls,
     * as in {@link #startRequest(long, InetSocketAddress, OutgoingPayload, long, boolean)}.
     */
    public boolean respond(long now, InetSocketAddress client, long rpcId, OutgoingPayload response) {
        Objects.requireNonNull(response, "response");
        return commands.respond(now, client, rpcId, null, null, response, response.payloadLength());
    }

    /**
     * {@link #respond(long, InetSocketAddress, long, ByteBuffer)} for a response in several parts,
     * as in {@link #startRequestInParts}.
     */
    public boolean respondInParts(long now, InetSocketAddress client, long rpcId, ByteBuffer[] response) {
        Objects.requireNonNull(response, "response");
        return commands.respond(now, client, rpcId, response.length == 0 ? null : response[0], response,
                OutgoingMessage.lengthOf(response));
    }

    /**
     * Abandons a client RPC: frees its state, and no event follows. If any of the request went out,
     * the server is sent a CANCEL (once), on which it drops the RPC and, if its application holds
     * the request, says so with a CANCELLED event; should that packet be lost, the server learns
     * when it next asks (RPC_UNKNOWN).
     *
     * @return false if no such RPC is live
     */
    public boolean abort(long now, long rpcId) { return commands.abort(rpcId); }

    /**
     * Gives up a server RPC (the request of {@code client} with client id {@code rpcId}) in whatever
     * state it is: frees its state and its response, if any, without telling the client, exactly as
     * if the client had sent RPC_UNKNOWN (counted as {@link Counter#SERVER_RPCS_ABANDONED}). The
     * client learns of it when it next asks: it gets RPC_UNKNOWN and restarts its request. Use it
     * when the application will not answer a request (for instance after a refused
     * {@link #respond}).
     *
     * @return false if no such server RPC is live
     */
    public boolean abandon(long now, InetSocketAddress client, long rpcId) {
        return commands.abandon(client, rpcId);
    }

    /**
     * Refuses a request delivered by a REQUEST event and not yet answered, without running it: the
     * application is overloaded. Frees the server RPC (counted as
     * {@link Counter#SERVER_RPCS_ABANDONED}) and sends the client an OVERLOADED packet, on which
     * its engine fails the RPC at once with {@link RpcError#OVERLOADED} (see docs/wire-format.md).
     *
     * @return false if no such server RPC waits for its response
     */
    public boolean rejectOverloaded(long now, InetSocketAddress client, long rpcId) {
        return commands.rejectOverloaded(client, rpcId);
    }

    // ------------------------------------------------------------------ outputs

    /** Whether {@link #pollEvent()} has something. */
    public boolean hasEvents() { return !events.isEmpty(); }

    /** The next event, or {@code null}. */
    public EngineEvent pollEvent() { return events.poll(); }

    /**
     * Gives back an event from {@link #pollEvent()} that the caller is done with, so that the
     * engine fills it again for a later event instead of allocating one. Optional; after it the
     * caller must not read the event (its message, taken out before, stays the caller's).
     */
    public void recycle(EngineEvent event) { events.recycle(Objects.requireNonNull(event, "event")); }

    /**
     * Writes the next datagram(s) to send into {@code out} at its position (advancing it) and
     * describes them, or returns {@code null} when nothing may be sent now.
     *
     * @param out must have room for at least one full datagram ({@link EngineConfig#maxDatagram()})
     * @return a reused descriptor, valid until the next call
     */
    public Transmit pollTransmit(long now, ByteBuffer out) {
        if (out.order() != java.nio.ByteOrder.BIG_ENDIAN) {
            throw new IllegalArgumentException("transmit buffer must be big-endian (network order)");
        }
        if (out.remaining() < cfg.maxDatagram()) {
            throw new IllegalArgumentException("transmit buffer has " + out.remaining()
                    + " bytes free, needs at least " + cfg.maxDatagram());
        }
        if (inBatch) {
            endBatch();
        }
        return transmitOrder.poll(now, out);
    }

    /**
     * When {@link #onTimer} should next be called (ns), or {@link Long#MAX_VALUE} if never. A
     * call earlier than this is harmless.
     */
    public long nextDeadline() { return Math.min(clock.nextTickAt(), transmitOrder.wakeAt()); }

    // ------------------------------------------------------------------ inputs

    /** The clock reached {@code now}: runs the timer tick if due and releases paced data. */
    public void onTimer(long now) {
        transmitOrder.onTimer(now);
        if (clock.advance(now)) {
            counters.bump(Counter.TICKS);
            timer.tick();
            if (!rpcs.hasTimedState()) {
                clock.disarm();
            }
        }
    }

    /**
     * A datagram arrived from {@code from}: the bytes between the buffer's position and limit
     * (neither is changed). It holds one packet, or several back to back as UDP GRO coalesces
     * them (all as long as the first, but the last, which may be shorter): each packet is
     * validated on its own, and a bad one is dropped and counted alone. A datagram whose first
     * packet is not a Homa header of this version, or that would hold more than 128 packets, is
     * one drop. What the engine keeps it takes through its {@link PayloadMemory}: with {@link PayloadMemory#HEAP} a copy, so the buffer may
     * be reused at once; a shell's memory may instead retain the datagram's buffer
     * ({@link PayloadMemory#keep}).
     *
     * <p>Grants are decided once for the datagram, after all its packets, or, inside
     * {@link #beginBatch()}, once for the whole batch.
     */
    public void onDatagram(long now, InetSocketAddress from, ByteBuffer datagram) {
        if (datagram.order() != java.nio.ByteOrder.BIG_ENDIAN) {
            datagram = datagram.duplicate().order(java.nio.ByteOrder.BIG_ENDIAN); // rare: shells use network order
        }
        if (!receiving) {
            receiving = true;
            receivingSince = now;
        }
        int base = datagram.position();
        int length = datagram.remaining();
        int stride = PacketDecoder.packetLength(datagram, base, length);
        if (stride <= 0 || stride >= length) {
            onPacket(now, from, datagram, base, length); // one packet (or a malformed datagram)
        } else if ((length + stride - 1) / stride > MAX_COALESCED_PACKETS) {
            counters.drop(DropReason.BAD_LENGTH); // no GSO send or GRO batch is that long
        } else {
            counters.bump(Counter.COALESCED_DATAGRAMS);
            int end = base + length;
            for (int at = base; at < end; at += stride) {
                onPacket(now, from, datagram, at, Math.min(stride, end - at));
            }
        }
        if (!inBatch) {
            incoming.scheduleGrants();
        }
    }

    /**
     * Opens a batch: the datagrams given to {@link #onDatagram} until {@link #endBatch} (or the
     * next {@link #pollTransmit}, which ends it too) share one grant decision, so that a read
     * round of many segments of one message grants once. Optional; idempotent.
     */
    public void beginBatch() {
        inBatch = true;
    }

    /** Ends a batch: the grants its datagrams allow are decided now (and go out by {@link #pollTransmit}). */
    public void endBatch() {
        inBatch = false;
        incoming.scheduleGrants();
    }

    /** One packet: the {@code length} bytes at absolute index {@code at} of {@code datagram}. */
    private void onPacket(long now, InetSocketAddress from, ByteBuffer datagram, int at, int length) {
        DecodedPacket p = decoded;
        DropReason reason = PacketDecoder.decode(datagram, at, length, cfg.maxMessageLength, p);
        if (reason != null) {
            counters.drop(reason);
            return;
        }
        counters.add(Counter.BYTES_RECEIVED, length);
        counters.bump(Counter.received(p.type));
        switch (p.type) {
            case DATA -> {
                if (!RpcIds.isClientId(p.senderId) && rpcs.clientRpc(p.senderId ^ 1) == null) {
                    strays.onData(now, from, p.senderId); // then dropped as UNKNOWN_RPC, its ack still read
                }
                incoming.onData(now, from, datagram, p);
            }
            case GRANT -> outgoing.onGrant(from, p);
            case RESEND -> {
                counters.observer.resendReceived(from, p.senderId, p.grantOrResendOffset, p.resendLength);
                outgoing.onResend(from, p, incarnation, now - receivingSince);
            }
            case RPC_UNKNOWN, RPC_UNKNOWN_SINCE -> outgoing.onRpcUnknown(now, from, p);
            case BUSY -> timer.onBusy(from, p);
            case CUTOFFS -> priorities.onCutoffs(from, p);
            case NEED_ACK -> acks.onNeedAck(from, p.senderId);
            case ACK -> acks.onAck(from, p);
            case OVERLOADED -> outgoing.onOverloaded(from, p);
            case CANCEL -> commands.onCancel(from, p.senderId);
        }
    }

    /**
     * Releases the received payload memory the engine holds: the chunks of incomplete messages and
     * the messages of events not yet polled (those events are dropped); and tells the
     * {@link PayloadReleaseListener} of every outgoing payload it still reads. For shutting down:
     * the engine must not be used afterwards.
     */
    public void close() {
        for (Rpc r : rpcs.allLive()) {
            if (r.in != null) {
                rpcs.discardIncoming(r);
            }
            if (r.out != null) {
                rpcs.releaseOutgoing(r);
            }
        }
        EngineEvent e;
        while ((e = events.poll()) != null) {
            if (e.message() != null) {
                e.message().release();
            }
        }
    }

    // ------------------------------------------------------------------ introspection

    /** A counter's value. */
    public long counter(Counter c) { return counters.get(c); }

    /** Datagrams dropped for {@code reason}. */
    public long drops(DropReason reason) { return counters.drops(reason); }

    /** Live client plus server RPCs. */
    public int liveRpcs() { return rpcs.liveRpcs(); }

    public int liveClientRpcs() { return rpcs.clientRpcCount(); }

    public int liveServerRpcs() { return rpcs.serverRpcCount(); }

    /** Live server RPCs for requests from one peer address: what {@code maxServerRpcsPerPeer} limits. */
    public int liveServerRpcs(InetSocketAddress peer) { return state.liveServerRpcs(peer); }

    /**
     * Memory held for incoming messages not yet complete: their reassembly chunks plus the
     * engine's bookkeeping for each (an estimate, see docs/security.md). What
     * {@code maxBufferedBytes} limits. Delivered messages no longer count.
     */
    public long bufferedBytes() { return limits.bufferedBytes(); }

    /** The same, for the messages from one peer address: what {@code maxBufferedBytesPerPeer} limits. */
    public long bufferedBytes(InetSocketAddress peer) { return state.bufferedBytes(peer); }

    /** The highest {@link #bufferedBytes()} ever reached by this engine. */
    public long bufferedBytesHighWater() { return limits.bufferedBytesHighWater(); }

    /** The highest {@link #bufferedBytes(InetSocketAddress)} ever reached by any one peer. */
    public long peerBufferedBytesHighWater() { return limits.peerBufferedBytesHighWater(); }

    /**
     * Bytes of outgoing messages the engine holds (requests and responses from
     * {@code startRequest}/{@code respond} until their payload is released): what
     * {@code maxOutgoingBytes} limits.
     */
    public long outgoingBytes() { return limits.outgoingBytes(); }

    /** The highest {@link #outgoingBytes()} ever reached by this engine. */
    public long outgoingBytesHighWater() { return limits.outgoingBytesHighWater(); }

    /** Bytes granted or unscheduled but not yet received, over all incoming messages. */
    public long incomingBytes() { return grants.incoming(); }

    /**
     * Scheduled bytes (beyond each message's unscheduled prefix) granted and not yet received, an
     * upper bound: what the incoming budget {@code maxIncoming} limits.
     */
    public long grantedUnreceivedBytes() { return state.grantedUnreceivedBytes(); }

    /**
     * Adds a snapshot of every live RPC, oldest first, to {@code out} (allocates one record each).
     *
     * @param now the engine's clock, for the RPCs' ages
     */
    public void rpcs(long now, List<RpcState> out) { state.rpcs(now, out); }

    /** Live RPCs asleep in the timer's wheel: the ticks before their time do not visit them. */
    int sleepingRpcs() { return rpcs.wheel().asleep(); }

    /** Ids remembered for finished server RPCs (expire after {@code tombstoneTicks}). */
    public int tombstones() { return rpcs.tombstones(); }

    /**
     * The smoothed round trip to {@code peer} in ns (a request's last byte to its response's first,
     * server time included), or 0 before a sample: it stretches the RESEND and NEED_ACK timers.
     */
    public long smoothedRttNanos(InetSocketAddress peer) { return state.smoothedRttNanos(peer); }

    /** Peers known (per-peer state is small and swept when idle). */
    public int peers() { return rpcs.peerCount(); }

    /**
     * True when the engine holds no per-RPC state at all: no RPCs, no queued packets or events, no
     * buffered bytes, no pending acks and no tombstones.
     */
    public boolean isQuiescent() { return state.isQuiescent(); }

    /** A one-line summary of the engine's state, for logs and failing tests. */
    public String describe() { return state.describe(); }
}
