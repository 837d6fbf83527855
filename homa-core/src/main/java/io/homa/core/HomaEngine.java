package io.homa.core;

import io.homa.core.wire.DecodedPacket;
import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketDecoder;
import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;

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
 */
public final class HomaEngine {
    /** Control packets go at the highest level. */
    static final int CONTROL_PRIORITY = WireFormat.MAX_PRIORITY;
    private static final int MAX_RESEND_GAPS = 4;
    private static final int PEER_SWEEP_THRESHOLD = 4096;

    private final EngineConfig cfg;
    private final int segment;
    /** Bytes of timer packets this tick may still send, refilled each tick (see {@link #timerBudget}). */
    private long timerBytes;
    private final long timerBytesPerTick;
    private final long timerBytesMax;
    private final int unscheduledLimit;
    private final int[] ourCutoffs;
    private final int ourCutoffVersion = 1;

    private final Map<InetSocketAddress, Peer> peers = new HashMap<>();
    private final LongMap<Rpc> clientRpcs = new LongMap<>(64);
    private int serverRpcCount;
    private final GrantScheduler grants;
    private final SenderQueue senders;
    private final Pacer pacer;
    private final ArrayDeque<ControlPacket> control = new ArrayDeque<>();
    private final ArrayDeque<ControlPacket> controlPool = new ArrayDeque<>();
    private final long[] ackIds = new long[WireFormat.MAX_ACKS];
    private final int[] ackPorts = new int[WireFormat.MAX_ACKS];
    private final ArrayDeque<EngineEvent> events = new ArrayDeque<>();
    private final long[] counters = new long[Counter.all().length];
    private final long[] drops = new long[DropReason.all().length];

    private final DecodedPacket pkt = new DecodedPacket();
    private final Transmit transmit = new Transmit();
    private final GrantScheduler.Sink grantSink = this::sendGrant;
    private final int[] gapScratch = new int[2 * MAX_RESEND_GAPS];
    /** Live RPCs in order of creation: the timer scans oldest first, as Linux Homa does. */
    private Rpc oldestLive;
    private Rpc newestLive;
    /** Timer packets per peer per tick: at most this many RPCs ask one peer for a RESEND, ... */
    private static final int RESENDS_PER_PEER_PER_TICK = 1;
    /** ... send it NEED_ACK, ... */
    private static final int NEED_ACKS_PER_PEER_PER_TICK = 8;
    /** ... or tell it BUSY. */
    private static final int BUSY_PER_PEER_PER_TICK = 1;
    /** Asks without progress double the interval up to 2^this times ... */
    private static final int MAX_ASK_BACKOFF_SHIFT = 6;
    /**
     * ... but never beyond timeoutTicks / this: a peer gives up a silent RPC after timeoutTicks
     * (a server forgets an unacknowledged response, so a late RESEND restarts the request), and
     * this many asks make it unlikely that loss alone silences a live RPC that long.
     */
    private static final int MIN_ASKS_PER_TIMEOUT = 10;

    private long nextId;
    private final long idStep;
    private long seq;
    private long tick;
    private long nextTickAt = Long.MAX_VALUE;
    private long pacerWakeAt = Long.MAX_VALUE;
    /** Memory charged for incomplete incoming messages (chunks plus bookkeeping). */
    private long bufferedBytes;
    private long bufferedBytesHighWater;
    private long peerBufferedBytesHighWater;
    /** Bytes of outgoing payloads the engine holds (from startRequest/respond until released). */
    private long outgoingBytes;
    private long outgoingBytesHighWater;
    /** Set by {@link #findRpc}: the id named an RPC of ours with another peer. */
    private boolean lookupWrongPeer;
    private PayloadReleaseListener releaseListener = p -> { };

    /**
     * @param config the tunables
     * @param randomSeed seeds the first RPC id (use a secure random value in production, a fixed one
     *                   in simulations); the first id is unpredictable, not 2
     */
    public HomaEngine(EngineConfig config, long randomSeed) {
        this.cfg = Objects.requireNonNull(config, "config");
        this.segment = cfg.segmentPayload();
        // Timer packets (RESEND, NEED_ACK, BUSY) may take timerTrafficPercent of the link, a few
        // ticks' worth at once at most.
        this.timerBytesPerTick = Math.max(1, (long) (cfg.linkMbps * 125_000.0 * cfg.timerTrafficPercent / 100
                * cfg.tickNanos / 1e9));
        this.timerBytesMax = Math.max(4 * timerBytesPerTick, 4L * (WireFormat.RESEND_LENGTH + cfg.ipUdpOverhead));
        this.timerBytes = timerBytesMax;
        this.unscheduledLimit = cfg.unscheduledLimit();
        this.ourCutoffs = cfg.unscheduledCutoffs();
        this.grants = new GrantScheduler(cfg);
        this.senders = new SenderQueue(cfg.fifoSendOrderForTests);
        this.pacer = new Pacer(cfg);
        this.idStep = RpcIds.step(cfg.idShardCount);
        this.nextId = RpcIds.first(new SplittableRandom(randomSeed).nextLong(), cfg.idShard, cfg.idShardCount);
    }

    public EngineConfig config() {
        return cfg;
    }

    /** Who hears when an outgoing payload is no longer read (see {@link PayloadReleaseListener}). */
    public void setPayloadReleaseListener(PayloadReleaseListener listener) {
        this.releaseListener = Objects.requireNonNull(listener, "listener");
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
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(request, "request");
        int length = request.remaining();
        if (length > cfg.maxMessageLength) {
            throw new IllegalArgumentException("request of " + length
                    + " bytes exceeds maxMessageLength " + cfg.maxMessageLength);
        }
        checkOutgoingLength("request", length);
        if (liveRpcs() >= cfg.maxRpcs) {
            counters[Counter.RPC_LIMIT_REFUSALS.ordinal()]++;
            throw new EngineLimitException("maxRpcs", "engine holds maxRpcs=" + cfg.maxRpcs + " RPCs already");
        }
        checkOutgoingRoom("request", length);
        long id = allocateId();
        Peer peer = peerFor(server);
        Rpc rpc = new Rpc(id, peer, true);
        linkLive(rpc);
        rpc.out = new OutgoingMessage(rpc, request, seq++, unscheduledLimit);
        addOutgoing(length);
        clientRpcs.put(id, rpc);
        peer.clientRpcs++;
        counters[Counter.CLIENT_RPCS_STARTED.ordinal()]++;
        senders.offer(rpc.out);
        armTick(now);
        return id;
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
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(response, "response");
        int length = response.remaining();
        if (length > cfg.maxMessageLength) {
            throw new IllegalArgumentException("response of " + length
                    + " bytes exceeds maxMessageLength " + cfg.maxMessageLength);
        }
        Peer peer = peers.get(client);
        Rpc rpc = peer == null ? null : peer.serverRpcs.get(rpcId);
        if (rpc == null || rpc.state != Rpc.State.SERVER_PROCESSING) {
            return false;
        }
        checkOutgoingLength("response", length);
        checkOutgoingRoom("response", length);
        rpc.out = new OutgoingMessage(rpc, response, seq++, unscheduledLimit);
        addOutgoing(length);
        rpc.state = Rpc.State.SERVER_RESPONDING;
        rpc.silentTicks = 0;
        senders.offer(rpc.out);
        armTick(now);
        return true;
    }

    /**
     * Abandons a client RPC: frees its state, and no event follows. The server learns of it when it
     * next asks (RPC_UNKNOWN or ACK).
     *
     * @return false if no such RPC is live
     */
    public boolean abort(long now, long rpcId) {
        Rpc rpc = clientRpcs.get(rpcId);
        if (rpc == null) {
            return false;
        }
        counters[Counter.CLIENT_RPCS_ABORTED.ordinal()]++;
        free(rpc);
        return true;
    }

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
        Peer peer = peers.get(client);
        Rpc rpc = peer == null ? null : peer.serverRpcs.get(rpcId);
        if (rpc == null) {
            return false;
        }
        counters[Counter.SERVER_RPCS_ABANDONED.ordinal()]++;
        free(rpc);
        return true;
    }

    private void checkOutgoingLength(String what, int length) {
        if (length > cfg.maxOutgoingBytes) {
            throw new IllegalArgumentException(what + " of " + length + " bytes exceeds maxOutgoingBytes "
                    + cfg.maxOutgoingBytes + ": it could never be queued");
        }
    }

    private void checkOutgoingRoom(String what, int length) {
        if (outgoingBytes + length > cfg.maxOutgoingBytes) {
            counters[Counter.OUTGOING_LIMIT_REFUSALS.ordinal()]++;
            throw new EngineLimitException("maxOutgoingBytes", what + " of " + length
                    + " bytes refused: the engine holds " + outgoingBytes + " bytes of outgoing messages"
                    + " and maxOutgoingBytes=" + cfg.maxOutgoingBytes);
        }
    }

    private void addOutgoing(int length) {
        outgoingBytes += length;
        if (outgoingBytes > outgoingBytesHighWater) {
            outgoingBytesHighWater = outgoingBytes;
        }
    }

    // ------------------------------------------------------------------ outputs

    /** Whether {@link #pollEvent()} has something. */
    public boolean hasEvents() {
        return !events.isEmpty();
    }

    /** The next event, or {@code null}. */
    public EngineEvent pollEvent() {
        return events.poll();
    }

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
        ControlPacket c = control.poll();
        if (c != null) {
            int len = c.buffer.position();
            out.put(c.buffer.array(), 0, len);
            fill(c.destination, CONTROL_PRIORITY, len, 1, len, false);
            pacer.transmitted(now, len + cfg.ipUdpOverhead + WireFormat.ETHERNET_FRAME_OVERHEAD);
            c.destination = null;
            controlPool.add(c);
            return transmit;
        }
        pacerWakeAt = Long.MAX_VALUE;
        OutgoingMessage m = senders.peek();
        if (m == null) {
            return null;
        }
        if (m.hasRetransmit()) {
            // Retransmissions wait for the pacer too: a burst of them into a full NIC queue would
            // only delay every control packet and short message behind it.
            if (!pacer.mayTransmit(now, m.retransmitEnd() - m.retransmitStart())) {
                counters[Counter.PACER_HOLDS.ordinal()]++;
                pacerWakeAt = pacer.nextSendTime();
                return null;
            }
            return writeRetransmit(now, m, out);
        }
        if (!pacer.mayTransmit(now, m.remaining())) {
            counters[Counter.PACER_HOLDS.ordinal()]++;
            pacerWakeAt = pacer.nextSendTime();
            return null;
        }
        return writeNewData(now, m, out);
    }

    /**
     * When {@link #onTimer} should next be called (ns), or {@link Long#MAX_VALUE} if never. A
     * call earlier than this is harmless.
     */
    public long nextDeadline() {
        return Math.min(nextTickAt, pacerWakeAt);
    }

    // ------------------------------------------------------------------ inputs

    /** The clock reached {@code now}: runs the timer tick if due and releases paced data. */
    public void onTimer(long now) {
        if (now >= pacerWakeAt) {
            pacerWakeAt = Long.MAX_VALUE;
        }
        if (now >= nextTickAt) {
            tick++;
            counters[Counter.TICKS.ordinal()]++;
            nextTickAt = now + cfg.tickNanos;
            runTick(now);
            if (!hasTimedState()) {
                nextTickAt = Long.MAX_VALUE;
            }
        }
    }

    /**
     * A datagram arrived from {@code from}: the bytes between the buffer's position and limit
     * (neither is changed; the engine copies what it keeps, so the buffer may be reused at once).
     */
    public void onDatagram(long now, InetSocketAddress from, ByteBuffer datagram) {
        DropReason reason = PacketDecoder.decode(datagram, cfg.maxMessageLength, pkt);
        if (reason != null) {
            drop(reason);
            return;
        }
        counters[Counter.BYTES_RECEIVED.ordinal()] += datagram.remaining();
        switch (pkt.type) {
            case DATA -> {
                counters[Counter.PACKETS_RECEIVED_DATA.ordinal()]++;
                handleData(now, from, datagram);
            }
            case GRANT -> {
                counters[Counter.PACKETS_RECEIVED_GRANT.ordinal()]++;
                handleGrant(from);
            }
            case RESEND -> {
                counters[Counter.PACKETS_RECEIVED_RESEND.ordinal()]++;
                handleResend(from);
            }
            case RPC_UNKNOWN -> {
                counters[Counter.PACKETS_RECEIVED_RPC_UNKNOWN.ordinal()]++;
                handleRpcUnknown(from);
            }
            case BUSY -> {
                counters[Counter.PACKETS_RECEIVED_BUSY.ordinal()]++;
                Rpc rpc = findRpc(from, pkt.senderId);
                if (rpc != null) {
                    rpc.silentTicks = 0;
                } else {
                    dropLookup();
                }
            }
            case CUTOFFS -> {
                counters[Counter.PACKETS_RECEIVED_CUTOFFS.ordinal()]++;
                handleCutoffs(from);
            }
            case NEED_ACK -> {
                counters[Counter.PACKETS_RECEIVED_NEED_ACK.ordinal()]++;
                handleNeedAck(from);
            }
            case ACK -> {
                counters[Counter.PACKETS_RECEIVED_ACK.ordinal()]++;
                for (int i = 0; i < pkt.ackCount; i++) {
                    acknowledged(from, pkt.ackIds[i]);
                }
            }
        }
    }

    // ------------------------------------------------------------------ receiving DATA

    private void handleData(long now, InetSocketAddress from, ByteBuffer buf) {
        if (pkt.ackId != 0) {
            // First, whatever becomes of the data: a server refusing new requests at maxRpcs is
            // the one that most needs the acks riding on them.
            acknowledged(from, pkt.ackId);
        }
        long senderId = pkt.senderId;
        Rpc rpc;
        boolean fresh = false;
        if ((senderId & 1) == 0) {
            // A request segment: our server RPC for (from, senderId).
            Peer peer = peers.get(from);
            rpc = peer == null ? null : peer.serverRpcs.get(senderId);
            if (rpc == null) {
                if (peer != null && peer.tombstones.containsKey(senderId)) {
                    counters[Counter.LATE_DUPLICATE_REQUESTS.ordinal()]++;
                    return;
                }
                if (liveRpcs() >= cfg.maxRpcs) {
                    drop(DropReason.RPC_LIMIT);
                    return;
                }
                if (peer != null && peer.serverRpcs.size() >= cfg.maxServerRpcsPerPeer) {
                    drop(DropReason.PEER_RPC_LIMIT);
                    return;
                }
                // Not created until the packet has passed every check below.
                rpc = null;
                fresh = true;
            } else if (rpc.state != Rpc.State.SERVER_RECEIVING) {
                counters[Counter.DUPLICATE_DATA.ordinal()]++;
                return;
            }
        } else {
            // A response segment: our client RPC senderId ^ 1.
            rpc = clientRpcs.get(senderId ^ 1);
            if (rpc == null) {
                drop(DropReason.UNKNOWN_RPC);
                return;
            }
            if (!rpc.peer.address.equals(from)) {
                drop(DropReason.WRONG_PEER);
                return;
            }
            if (!rpc.out.fullySent()) {
                drop(DropReason.WRONG_STATE);
                return;
            }
        }
        IncomingMessage in = fresh ? null : rpc.in;
        boolean newMessage = in == null;
        int length = pkt.messageLength;
        int granted;
        if (newMessage) {
            // Trust the sender's unscheduled amount only up to our own limit plus a segment.
            granted = (int) Math.min(length, Math.min(pkt.incoming, (long) unscheduledLimit + cfg.maxDatagram()));
        } else if (length != in.length) {
            drop(DropReason.LENGTH_CHANGED);
            return;
        } else {
            granted = in.granted;
        }
        int offset = pkt.offset;
        int n = pkt.payloadLength;
        if (n > 0 && offset >= granted) {
            drop(DropReason.BEYOND_GRANT);
            return;
        }
        // Memory this packet may take (chunks and bookkeeping), checked against both buffer limits.
        long need = newMessage ? IncomingMessage.footprintOfNew(length, offset, n) : in.footprintGrowthFor(offset, n);
        if (need > 0) {
            // Over a limit, the memory goes to the better-ranked message (SRPT): a partly received
            // message that ranks worse is evicted, so that partial messages can never hold all the
            // memory while each waits for more (a deadlock with no timeout, as the peer stays alive).
            long remaining = newMessage ? length : in.remaining();
            long rankSeq = newMessage ? Long.MAX_VALUE : in.seq;
            while (bufferedBytes + need > cfg.maxBufferedBytes) {
                if (!evictWorse(null, remaining, rankSeq, in)) {
                    drop(DropReason.BUFFER_LIMIT);
                    return;
                }
            }
            Peer owner = fresh ? peers.get(from) : rpc.peer;
            while (owner != null && owner.bufferedBytes + need > cfg.maxBufferedBytesPerPeer) {
                if (!evictWorse(owner, remaining, rankSeq, in)) {
                    drop(DropReason.PEER_BUFFER_LIMIT);
                    return;
                }
            }
        }
        // The packet is acceptable: only now create what it needs.
        if (fresh) {
            Peer peer = peerFor(from);
            rpc = new Rpc(senderId ^ 1, peer, false);
            linkLive(rpc);
            peer.serverRpcs.put(senderId, rpc);
            serverRpcCount++;
            counters[Counter.SERVER_RPCS_STARTED.ordinal()]++;
            armTick(now);
        }
        if (newMessage) {
            in = new IncomingMessage(rpc, length, seq++);
            in.granted = granted;
            rpc.in = in;
            grants.track(in);
            charge(rpc.peer, in.footprint());
        }
        int added = 0;
        if (n > 0) {
            long before = in.outstanding();
            long footprintBefore = in.footprint();
            added = in.write(offset, buf, pkt.payloadOffset, n);
            charge(rpc.peer, in.footprint() - footprintBefore);
            grants.received(in, before);
            if (added < 0) {
                drop(DropReason.BUFFER_LIMIT); // too fragmented; the gap is asked for again later
            } else if (added == 0) {
                counters[Counter.DUPLICATE_DATA.ordinal()]++;
            }
        }
        if (newMessage && rpc.client && rpc.timingRoundTrip && rpc.restarts == 0 && !pkt.retransmit) {
            // Karn's rule, made exact by the retransmit flag: an original packet answers the
            // original request, whatever RESENDs were sent meanwhile.
            rpc.peer.rtt.sample(now - rpc.requestSentAt);
            counters[Counter.RTT_SAMPLES.ordinal()]++;
        }
        if (added > 0 || newMessage) {
            rpc.asks = 0; // progress: the next silence starts a fresh backoff
        }
        rpc.silentTicks = 0;
        rpc.peer.heardTick = tick; // the peer is alive
        rpc.heard = true;
        if (pkt.cutoffVersion != ourCutoffVersion) {
            maybeSendCutoffs(now, rpc);
        }
        if (in.complete()) {
            finishIncoming(rpc);
        } else if (in.granted < in.length) {
            grants.add(in);
        }
        grants.schedule(grantSink);
    }

    /** Charges (or, negative, releases) incoming-message memory to the engine and to the peer. */
    private void charge(Peer peer, long bytes) {
        bufferedBytes += bytes;
        peer.bufferedBytes += bytes;
        if (bytes > 0) {
            if (bufferedBytes > bufferedBytesHighWater) {
                bufferedBytesHighWater = bufferedBytes;
            }
            if (peer.bufferedBytes > peerBufferedBytesHighWater) {
                peerBufferedBytesHighWater = peer.bufferedBytes;
            }
        }
    }

    /** Forgets the RPC's incoming message: out of the scheduler, its budget and memory released. */
    /** Scratch for {@link #evictWorse}: the worst-ranked evictable message found so far. */
    private IncomingMessage evictCandidate;
    private IncomingMessage evictSelf;

    /**
     * Frees the worst-ranked request being received (from {@code scope}, or from any peer) if it
     * ranks below a message with {@code remaining} bytes to go and arrival {@code seq}. Its client
     * hears RPC_UNKNOWN at its next RESEND and restarts the request; nothing was delivered, so
     * nothing runs twice.
     *
     * @return whether memory was freed
     */
    private boolean evictWorse(Peer scope, long remaining, long seq, IncomingMessage self) {
        evictCandidate = null;
        evictSelf = self;
        if (scope != null) {
            scope.serverRpcs.forEachValue(this::considerEviction);
        } else {
            for (Peer p : peers.values()) {
                p.serverRpcs.forEachValue(this::considerEviction);
            }
        }
        IncomingMessage worst = evictCandidate;
        evictCandidate = null;
        evictSelf = null;
        if (worst == null || worst.remaining() < remaining || (worst.remaining() == remaining && worst.seq < seq)) {
            return false; // nothing ranks below the newcomer: it waits (its sender retries)
        }
        counters[Counter.MEMORY_EVICTIONS.ordinal()]++;
        free(worst.rpc);
        return true;
    }

    private void considerEviction(Rpc r) {
        IncomingMessage m = r.in;
        if (m == null || m == evictSelf || r.state != Rpc.State.SERVER_RECEIVING || m.footprint() == 0) {
            return;
        }
        IncomingMessage w = evictCandidate;
        if (w == null || m.remaining() > w.remaining() || (m.remaining() == w.remaining() && m.seq > w.seq)) {
            evictCandidate = m;
        }
    }

    private IncomingMessage releaseIncoming(Rpc rpc) {
        IncomingMessage in = rpc.in;
        grants.forget(in);
        charge(rpc.peer, -in.footprint());
        rpc.in = null;
        return in;
    }

    private void finishIncoming(Rpc rpc) {
        IncomingMessage in = releaseIncoming(rpc);
        ReceivedMessage message = in.toMessage();
        if (rpc.client) {
            counters[Counter.CLIENT_RPCS_COMPLETED.ordinal()]++;
            owe(rpc.peer, rpc.id);
            events.add(EngineEvent.response(rpc.id, rpc.peer.address, message));
            free(rpc);
        } else {
            rpc.state = Rpc.State.SERVER_PROCESSING;
            events.add(EngineEvent.request(rpc.clientId(), rpc.peer.address, message));
        }
    }

    private void maybeSendCutoffs(long now, Rpc rpc) {
        Peer peer = rpc.peer;
        if (peer.cutoffsSentAt != Long.MIN_VALUE && now - peer.cutoffsSentAt < cfg.cutoffsIntervalNanos) {
            return;
        }
        peer.cutoffsSentAt = now;
        ControlPacket c = control(peer.address);
        PacketEncoder.cutoffs(c.buffer, rpc.id, ourCutoffs, ourCutoffVersion);
        queueControl(c, Counter.PACKETS_SENT_CUTOFFS);
    }

    private void sendGrant(IncomingMessage m, int newGranted, int priority) {
        ControlPacket c = control(m.rpc.peer.address);
        PacketEncoder.grant(c.buffer, m.rpc.id, newGranted, priority);
        queueControl(c, Counter.PACKETS_SENT_GRANT);
    }

    // ------------------------------------------------------------------ control packets in

    /** The RPC a control packet from {@code from} with {@code senderId} is about, or null. */
    private Rpc findRpc(InetSocketAddress from, long senderId) {
        lookupWrongPeer = false;
        if ((senderId & 1) != 0) {
            Rpc rpc = clientRpcs.get(senderId ^ 1);
            if (rpc != null && !rpc.peer.address.equals(from)) {
                lookupWrongPeer = true; // someone else's RPC: never act on it
                return null;
            }
            if (rpc != null) {
                rpc.peer.heardTick = tick; // the peer is alive
                rpc.heard = true;
            }
            return rpc;
        }
        Peer peer = peers.get(from);
        if (peer != null) {
            peer.heardTick = tick;
        }
        return peer == null ? null : peer.serverRpcs.get(senderId);
    }

    /** Counts a failed {@link #findRpc} under the right reason. */
    private void dropLookup() {
        drop(lookupWrongPeer ? DropReason.WRONG_PEER : DropReason.UNKNOWN_RPC);
    }

    private void handleGrant(InetSocketAddress from) {
        Rpc rpc = findRpc(from, pkt.senderId);
        if (rpc == null) {
            dropLookup();
            return;
        }
        rpc.silentTicks = 0;
        OutgoingMessage out = rpc.out;
        if (out == null) {
            drop(DropReason.WRONG_STATE);
            return;
        }
        if (pkt.grantOrResendOffset > out.granted) {
            out.granted = Math.min(out.length, pkt.grantOrResendOffset);
            out.grantPriority = Math.min(pkt.priority, cfg.maxScheduledPriority);
            senders.offer(out);
        }
    }

    private void handleResend(InetSocketAddress from) {
        Rpc rpc = findRpc(from, pkt.senderId);
        if (rpc == null) {
            if (lookupWrongPeer) {
                dropLookup();
            } else {
                sendBare(from, PacketType.RPC_UNKNOWN, pkt.senderId ^ 1, Counter.PACKETS_SENT_RPC_UNKNOWN);
            }
            return;
        }
        rpc.silentTicks = 0;
        OutgoingMessage out = rpc.out;
        if (out == null) {
            // Server still receiving the request or processing it: alive, nothing to send.
            sendBare(from, PacketType.BUSY, rpc.id, Counter.PACKETS_SENT_BUSY);
            return;
        }
        if (out.length == 0) {
            if (out.zeroSent) {
                out.zeroSent = false; // send the empty segment again
                senders.offer(out);
            }
            return;
        }
        int start = pkt.grantOrResendOffset;
        long end = pkt.resendLength < 0 ? out.sent : Math.min((long) out.length, (long) start + pkt.resendLength);
        if (end > out.granted) {
            // The receiver asks beyond our grant: a GRANT was lost.
            out.granted = (int) end;
            counters[Counter.LOST_GRANTS_RECOVERED.ordinal()]++;
        }
        int retransmitEnd = (int) Math.min(end, out.sent);
        if (start < retransmitEnd) {
            out.queueRetransmit(start, retransmitEnd, pkt.priority);
        } else {
            sendBare(from, PacketType.BUSY, rpc.id, Counter.PACKETS_SENT_BUSY);
        }
        senders.offer(out);
    }

    private void handleRpcUnknown(InetSocketAddress from) {
        Rpc rpc = findRpc(from, pkt.senderId);
        if (rpc == null) {
            dropLookup();
            return;
        }
        if (!rpc.client) {
            counters[Counter.SERVER_RPCS_ABANDONED.ordinal()]++;
            free(rpc);
            return;
        }
        // The server does not know our RPC (it restarted, or lost the whole request): start over.
        if (++rpc.restarts > cfg.maxRestarts) {
            fail(rpc, RpcError.PEER_UNKNOWN_RPC);
            return;
        }
        counters[Counter.REQUEST_RESTARTS.ordinal()]++;
        if (rpc.in != null) {
            releaseIncoming(rpc);
            grants.schedule(grantSink); // the freed budget may unblock another message
        }
        senders.remove(rpc.out);
        rpc.out.restart();
        rpc.heard = false; // the server forgot it
        rpc.silentTicks = 0;
        senders.offer(rpc.out);
    }

    private void handleCutoffs(InetSocketAddress from) {
        Peer peer = peers.get(from);
        if (peer == null) {
            drop(DropReason.UNKNOWN_RPC);
            return;
        }
        if (peer.cutoffs == null) {
            peer.cutoffs = new int[WireFormat.PRIORITY_LEVELS];
        }
        System.arraycopy(pkt.cutoffs, 0, peer.cutoffs, 0, WireFormat.PRIORITY_LEVELS);
        peer.cutoffVersion = pkt.cutoffVersion;
    }

    private void handleNeedAck(InetSocketAddress from) {
        if ((pkt.senderId & 1) == 0) {
            drop(DropReason.WRONG_STATE); // only a server asks for acks
            return;
        }
        long clientId = pkt.senderId ^ 1;
        Rpc rpc = clientRpcs.get(clientId);
        if (rpc != null) {
            if (!rpc.peer.address.equals(from)) {
                drop(DropReason.WRONG_PEER);
                return;
            }
            // Not finished here: no ACK yet. The server is alive, but the response may still be
            // queued in the network, so asking for it again now would only duplicate it; our own
            // timer asks if it stays missing.
            rpc.peer.heardTick = tick;
            return;
        }
        // Finished (or aborted) here: acknowledge it, with whatever else we owe this peer.
        Peer peer = peers.get(from);
        long[] ids = ackIds;
        int[] ports = ackPorts;
        int n = 0;
        ids[n++] = clientId;
        if (peer != null) {
            while (n < WireFormat.MAX_ACKS && !peer.pendingAcks.isEmpty()) {
                long id = peer.pendingAcks.poll();
                if (id != clientId) {
                    ids[n++] = id;
                }
            }
        }
        sendAck(from, ids, ports, n);
    }

    /** The client acknowledged {@code clientId}: free the finished server RPC. */
    private void acknowledged(InetSocketAddress from, long clientId) {
        Peer peer = peers.get(from);
        Rpc rpc = peer == null ? null : peer.serverRpcs.get(clientId);
        if (rpc != null && (rpc.state == Rpc.State.SERVER_AWAITING_ACK || rpc.state == Rpc.State.SERVER_RESPONDING)) {
            counters[Counter.SERVER_RPCS_COMPLETED.ordinal()]++;
            rpc.state = Rpc.State.SERVER_AWAITING_ACK;
            free(rpc);
        }
    }

    // ------------------------------------------------------------------ sending DATA

    private Transmit writeNewData(long now, OutgoingMessage m, ByteBuffer out) {
        Peer peer = m.rpc.peer;
        int priority = priorityAt(m, m.sent);
        int first = Math.min(segment, Math.min(m.granted, m.length) - m.sent);
        int segmentSize = WireFormat.DATA_HEADER + first;
        int count = 0;
        int total = 0;
        while (true) {
            int n = Math.min(segment, Math.min(m.granted, m.length) - m.sent);
            if (count > 0 && (n <= 0 || n > first || priorityAt(m, m.sent) != priority
                    || out.remaining() < WireFormat.DATA_HEADER + n
                    || !pacer.mayTransmit(now, m.remaining()))) {
                break;
            }
            PacketEncoder.data(out, m.rpc.id, m.length, Math.min(m.granted, m.length), m.sent,
                    peer.cutoffVersion, false, piggybackAck(peer), 0, m.payload, m.payloadIndex(m.sent), n);
            m.sent += n;
            if (m.length == 0) {
                m.zeroSent = true;
            }
            count++;
            total += WireFormat.DATA_HEADER + n;
            pacer.transmitted(now, WireFormat.DATA_HEADER + n + cfg.ipUdpOverhead + WireFormat.ETHERNET_FRAME_OVERHEAD);
            if (n < first || count >= cfg.maxGsoSegments) {
                break;
            }
        }
        counters[Counter.PACKETS_SENT_DATA.ordinal()] += count;
        fill(peer.address, priority, segmentSize, count, total, true);
        afterSend(now, m);
        return transmit;
    }

    private Transmit writeRetransmit(long now, OutgoingMessage m, ByteBuffer out) {
        Peer peer = m.rpc.peer;
        int pos = m.retransmitStart();
        int end = m.retransmitEnd();
        int priority = m.retransmitPriority();
        int first = Math.min(segment, end - pos);
        int count = 0;
        int total = 0;
        if (m.rpc.client) {
            m.rpc.timingRoundTrip = false; // Karn: the response now answers a repeated request
            m.rpc.roundTripSpoiled = true;
        }
        while (pos < end && count < cfg.maxGsoSegments) {
            int n = Math.min(segment, end - pos);
            if (count > 0 && (out.remaining() < WireFormat.DATA_HEADER + n || !pacer.mayTransmit(now, end - pos))) {
                break;
            }
            PacketEncoder.data(out, m.rpc.id, m.length, Math.min(m.granted, m.length), pos,
                    peer.cutoffVersion, true, piggybackAck(peer), 0, m.payload, m.payloadIndex(pos), n);
            pos += n;
            count++;
            total += WireFormat.DATA_HEADER + n;
            counters[Counter.BYTES_RETRANSMITTED.ordinal()] += n;
            pacer.transmitted(now, WireFormat.DATA_HEADER + n + cfg.ipUdpOverhead + WireFormat.ETHERNET_FRAME_OVERHEAD);
            if (n < first) {
                break;
            }
        }
        m.retransmitted(pos);
        counters[Counter.PACKETS_SENT_DATA.ordinal()] += count;
        counters[Counter.PACKETS_RETRANSMITTED.ordinal()] += count;
        fill(peer.address, priority, WireFormat.DATA_HEADER + first, count, total, true);
        afterSend(now, m);
        return transmit;
    }

    private void afterSend(long now, OutgoingMessage m) {
        if (!m.sendable()) {
            senders.pollHead();
        }
        Rpc rpc = m.rpc;
        if (rpc.client && !rpc.timingRoundTrip && !rpc.roundTripSpoiled && rpc.restarts == 0 && m.fullySent()) {
            rpc.timingRoundTrip = true; // the response's first original packet closes the round trip
            rpc.requestSentAt = now;
        }
        if (!rpc.client && rpc.state == Rpc.State.SERVER_RESPONDING && m.fullySent()) {
            rpc.state = Rpc.State.SERVER_AWAITING_ACK;
            rpc.silentTicks = 0;
        }
    }

    /** Priority of the byte at {@code offset}: unscheduled from the receiver's cutoffs, else granted. */
    private int priorityAt(OutgoingMessage m, int offset) {
        if (offset < m.unscheduledLimit || m.length == 0) {
            return unscheduledPriority(m.rpc.peer, m.length);
        }
        return m.grantPriority;
    }

    /** The unscheduled level a sender with our cutoffs uses for a message of {@code length}. */
    private int ourUnscheduledPriority(int length) {
        return levelFor(ourCutoffs, length);
    }

    private int levelFor(int[] cutoffs, int length) {
        for (int level = WireFormat.MAX_PRIORITY; level > cfg.maxScheduledPriority; level--) {
            if (cutoffs[level] >= length) {
                return level;
            }
        }
        return cfg.maxScheduledPriority + 1;
    }

    int unscheduledPriority(Peer peer, int length) {
        if (cfg.unscheduledAtLevelZeroForTests) {
            return 0;
        }
        if (peer.cutoffs == null) {
            return cfg.defaultUnscheduledPriority;
        }
        return levelFor(peer.cutoffs, length);
    }

    private void fill(InetSocketAddress dest, int priority, int segmentSize, int segments, int length, boolean data) {
        transmit.destination = dest;
        transmit.priority = priority;
        transmit.segmentSize = segmentSize;
        transmit.segments = segments;
        transmit.length = length;
        transmit.data = data;
        counters[Counter.BYTES_SENT.ordinal()] += length;
    }

    // ------------------------------------------------------------------ timer

    private void armTick(long now) {
        if (nextTickAt == Long.MAX_VALUE) {
            nextTickAt = now + cfg.tickNanos;
        }
    }

    private boolean hasTimedState() {
        if (!clientRpcs.isEmpty() || serverRpcCount > 0) {
            return true;
        }
        for (Peer p : peers.values()) {
            if (!p.tombstones.isEmpty() || !p.pendingAcks.isEmpty()) {
                return true;
            }
        }
        return false;
    }

    private void runTick(long now) {
        timerBytes = Math.min(timerBytes + timerBytesPerTick, timerBytesMax);
        // Oldest first, so that when a peer's budget of timer packets runs out the oldest RPCs
        // were served (and every RPC gets its turn as the older ones hear back).
        Rpc rpc = oldestLive;
        while (rpc != null) {
            Rpc next = rpc.newerLive; // checkRpc may free rpc
            checkRpc(rpc);
            rpc = next;
        }
        for (Peer p : peers.values()) {
            p.expireTombstones(tick);
            if (!p.pendingAcks.isEmpty() && tick - p.oldestAckTick >= cfg.ackDelayTicks) {
                flushAcks(p); // no DATA to this peer carried them in time
            }
        }
        if (peers.size() > PEER_SWEEP_THRESHOLD) {
            peers.values().removeIf(Peer::idle);
        }
    }

    private void linkLive(Rpc rpc) {
        rpc.olderLive = newestLive;
        if (newestLive != null) {
            newestLive.newerLive = rpc;
        } else {
            oldestLive = rpc;
        }
        newestLive = rpc;
    }

    private void unlinkLive(Rpc rpc) {
        if (rpc.olderLive != null) {
            rpc.olderLive.newerLive = rpc.newerLive;
        } else if (oldestLive == rpc) {
            oldestLive = rpc.newerLive;
        }
        if (rpc.newerLive != null) {
            rpc.newerLive.olderLive = rpc.olderLive;
        } else if (newestLive == rpc) {
            newestLive = rpc.olderLive;
        }
        rpc.olderLive = null;
        rpc.newerLive = null;
    }

    /**
     * One tick of silence accounting for one RPC (Linux Homa's homa_timer_check_rpc). Loss is
     * detected per RPC (its own silence), but an RPC times out only when its peer as a whole has
     * been silent too: a peer that answers other RPCs is alive and merely busy. Timer packets to
     * one peer are rationed per tick (one RPC's RESENDs, a few NEED_ACKs, one BUSY), so that a
     * thousand waiting RPCs do not flood an overloaded peer.
     */
    private void checkRpc(Rpc rpc) {
        if (rpc.state == Rpc.State.SERVER_PROCESSING) {
            rpc.silentTicks = 0; // the application is working on it
            return;
        }
        Peer peer = rpc.peer;
        peer.budget(tick, RESENDS_PER_PEER_PER_TICK, NEED_ACKS_PER_PEER_PER_TICK, BUSY_PER_PEER_PER_TICK);
        OutgoingMessage out = rpc.out;
        if (out != null && out.hasNewData()) {
            rpc.silentTicks = 0; // we owe the peer granted data: our pacer's turn, not its silence
            return;
        }
        IncomingMessage in = rpc.in;
        boolean receiving = rpc.client ? out.fullySent() : rpc.state == Rpc.State.SERVER_RECEIVING;
        if (receiving && in != null && in.received() >= in.granted) {
            // Everything we granted has arrived: the sender waits for our grants. Tell it we live,
            // often enough that it never times out (it gives up only after timeoutTicks of silence
            // from the whole peer), not every few ticks: SRPT may starve a long message for
            // seconds, and a keep-alive per waiting message per resendIntervalTicks was most of the
            // control traffic of a loaded W4 run.
            rpc.silentTicks = 0;
            if (++rpc.waitTicks >= keepAliveTicks() && peer.busyLeft > 0 && timerBudget(WireFormat.BARE_LENGTH)) {
                peer.busyLeft--;
                rpc.waitTicks = 0;
                sendBare(peer.address, PacketType.BUSY, rpc.id, Counter.PACKETS_SENT_BUSY);
            }
            return;
        }
        rpc.waitTicks = 0;
        rpc.silentTicks++;
        boolean awaitingAck = rpc.state == Rpc.State.SERVER_AWAITING_ACK;
        // A finished response waits for its ACK on its own silence; everything else also needs
        // the whole peer to be silent before it is given up.
        boolean peerSilent = tick - peer.heardTick >= cfg.timeoutTicks;
        if (rpc.silentTicks >= cfg.timeoutTicks && (awaitingAck || peerSilent)) {
            if (rpc.client) {
                counters[Counter.TIMEOUTS.ordinal()]++;
                fail(rpc, RpcError.TIMEOUT);
            } else {
                counters[Counter.SERVER_RPCS_TIMED_OUT.ordinal()]++;
                free(rpc);
            }
            return;
        }
        int rto = roundTripTicks(peer);
        if (awaitingAck) {
            // The client holds an ack up to ackDelayTicks hoping to piggy-back it, and it needs a
            // round trip to reach us: asking earlier only races it.
            if (rpc.silentTicks >= Math.max(cfg.needAckTicks, cfg.ackDelayTicks + rto) && askDue(rpc, rto)
                    && peer.needAcksLeft > 0 && (timerBudget(WireFormat.BARE_LENGTH) || nearTimeout(rpc))) {
                peer.needAcksLeft--;
                asked(rpc);
                sendBare(peer.address, PacketType.NEED_ACK, rpc.id, Counter.PACKETS_SENT_NEED_ACK);
            }
            return;
        }
        if (!rpc.client && rpc.in == null) {
            return; // a server sending its response has nothing to ask for: the client asks
        }
        int threshold = Math.max(cfg.resendTicks, rto);
        if (rpc.client && rpc.heard && !out.fullySent() && out.sent >= out.granted) {
            // Our request waits for grants from a server that knows it: while it does, it sends
            // keep-alives, and a lost GRANT comes back as its RESEND below the grant. Ask only
            // when two keep-alives were missed: the server may have forgotten the request (it
            // restarted, or evicted it for memory) and answers RPC_UNKNOWN, so we restart.
            threshold = Math.max(threshold, 2 * keepAliveTicks());
        }
        if (rpc.silentTicks >= threshold && askDue(rpc, rto) && peer.resendsLeft > 0
                && (timerBudget(WireFormat.RESEND_LENGTH) || nearTimeout(rpc))) {
            peer.resendsLeft--;
            asked(rpc);
            requestMissing(rpc);
        }
    }

    /**
     * Whether the RPC has been silent for half its timeout: it asks even when the timer's share of
     * the link is spent, so that the share can never keep a live peer from being asked before
     * the RPC times out (the per-peer ration still applies).
     */
    private boolean nearTimeout(Rpc rpc) {
        return rpc.silentTicks >= cfg.timeoutTicks / 2;
    }

    /** How often a receiver starving a message (SRPT) tells its sender that it is alive. */
    private int keepAliveTicks() {
        return Math.max(cfg.resendIntervalTicks, cfg.timeoutTicks / MIN_ASKS_PER_TIMEOUT);
    }

    /**
     * Takes one timer packet of {@code length} bytes from this tick's share of the link (see
     * {@code timerTrafficPercent}); false, and counted, if the share is spent: the RPC asks on a
     * later tick. The balance may go one packet negative (a packet goes whenever it is positive).
     */
    private boolean timerBudget(int length) {
        if (timerBytes <= 0) {
            counters[Counter.TIMER_PACKETS_DEFERRED.ordinal()]++;
            return false;
        }
        timerBytes -= length + cfg.ipUdpOverhead;
        return true;
    }

    /**
     * The measured round-trip timeout to {@code peer} in whole ticks (0 before any sample), capped
     * like the backoff so that a peer with slow answers is still asked several times before its
     * RPCs time out.
     */
    private int roundTripTicks(Peer peer) {
        long nanos = peer.rtt.timeoutNanos();
        if (nanos == 0) {
            return 0;
        }
        long ticks = (nanos + cfg.tickNanos - 1) / cfg.tickNanos + 1; // +1: ticks are coarse
        return (int) Math.min(ticks, Math.max(1, cfg.timeoutTicks / MIN_ASKS_PER_TIMEOUT));
    }

    /**
     * Whether the RPC may ask again: the first ask after silence, then after resendIntervalTicks (or
     * the round-trip timeout, if longer), doubled for each ask that brought no progress (as TCP
     * backs off its retransmission timer) so an overloaded path is not fed ever more requests.
     */
    private boolean askDue(Rpc rpc, int rto) {
        if (rpc.asks == 0) {
            return true;
        }
        long interval = (long) Math.max(cfg.resendIntervalTicks, rto) << Math.min(rpc.asks - 1, MAX_ASK_BACKOFF_SHIFT);
        return tick - rpc.lastAskTick >= Math.min(interval, Math.max(cfg.resendIntervalTicks, cfg.timeoutTicks / MIN_ASKS_PER_TIMEOUT));
    }

    private void asked(Rpc rpc) {
        rpc.lastAskTick = tick;
        if (rpc.asks <= MAX_ASK_BACKOFF_SHIFT) {
            rpc.asks++;
        }
    }

    /** Asks the peer for what we miss: the gaps below the grant, or (a client with nothing) all of it. */
    private void requestMissing(Rpc rpc) {
        IncomingMessage in = rpc.in;
        if (in == null) {
            if (rpc.client) {
                // Nothing of the response yet: ask for its first segment only. If the response
                // was lost, that segment brings its length and the next asks name the gaps; if it
                // is merely late, one segment is all that is duplicated.
                sendResend(rpc, 0, segment, cfg.defaultUnscheduledPriority);
            }
            return;
        }
        int n = in.ranges.gaps(in.granted, gapScratch, MAX_RESEND_GAPS);
        for (int i = 0; i < n; i++) {
            int start = gapScratch[2 * i];
            int end = gapScratch[2 * i + 1];
            int priority = start < unscheduledLimit ? ourUnscheduledPriority(in.length) : in.grantPriority;
            sendResend(rpc, start, end - start, priority);
        }
    }

    private void sendResend(Rpc rpc, int offset, int length, int priority) {
        ControlPacket c = control(rpc.peer.address);
        PacketEncoder.resend(c.buffer, rpc.id, offset, length, priority);
        queueControl(c, Counter.PACKETS_SENT_RESEND);
    }

    /** We finished client RPC {@code id} to {@code p}: its server may forget it once told. */
    private void owe(Peer p, long id) {
        if (p.pendingAcks.isEmpty()) {
            p.oldestAckTick = tick;
        }
        p.pendingAcks.add(id);
        if (p.pendingAcks.size() >= WireFormat.MAX_ACKS) {
            flushAcks(p); // a full ACK packet is worth sending now
        }
    }

    /** One ack we owe the DATA packet's destination, to ride in its header, or 0. */
    private long piggybackAck(Peer p) {
        if (p.pendingAcks.isEmpty()) {
            return 0;
        }
        counters[Counter.ACKS_PIGGYBACKED.ordinal()]++;
        return p.pendingAcks.poll();
    }

    private void flushAcks(Peer p) {
        while (!p.pendingAcks.isEmpty()) {
            long[] ids = ackIds;
            int[] ports = ackPorts;
            int n = 0;
            while (n < WireFormat.MAX_ACKS && !p.pendingAcks.isEmpty()) {
                ids[n++] = p.pendingAcks.poll();
            }
            sendAck(p.address, ids, ports, n);
        }
    }

    private void sendAck(InetSocketAddress to, long[] ids, int[] ports, int n) {
        ControlPacket c = control(to);
        // An ACK names no single RPC; its sender id is the first acknowledged one.
        PacketEncoder.ack(c.buffer, ids[0], ids, ports, n);
        queueControl(c, Counter.PACKETS_SENT_ACK);
    }

    // ------------------------------------------------------------------ lifecycle helpers

    private void fail(Rpc rpc, RpcError error) {
        counters[Counter.CLIENT_RPCS_FAILED.ordinal()]++;
        events.add(EngineEvent.failed(rpc.id, rpc.peer.address, error));
        free(rpc);
    }

    /** Removes every trace of an RPC (a server RPC leaves a tombstone against late duplicates). */
    private void free(Rpc rpc) {
        if (rpc.state == Rpc.State.DEAD) {
            return;
        }
        if (rpc.in != null) {
            releaseIncoming(rpc);
        }
        if (rpc.out != null) {
            senders.remove(rpc.out);
            ByteBuffer payload = rpc.out.payload;
            outgoingBytes -= rpc.out.length;
            rpc.out = null;
            releaseListener.released(payload);
        }
        Peer peer = rpc.peer;
        if (rpc.client) {
            clientRpcs.remove(rpc.id);
            peer.clientRpcs--;
        } else {
            peer.serverRpcs.remove(rpc.clientId());
            serverRpcCount--;
            if (cfg.tombstoneTicks > 0 && rpc.state == Rpc.State.SERVER_AWAITING_ACK) {
                // Acknowledged: the client has the response, so any request packet for this id
                // still in the network is a late duplicate that must not run again.
                // Kept for two round trips at least: on a slow path a copy can be late by that much.
                peer.tombstones.put(rpc.clientId(), tick + Math.max(cfg.tombstoneTicks, 2L * roundTripTicks(peer)));
            }
        }
        rpc.state = Rpc.State.DEAD;
        unlinkLive(rpc);
        grants.schedule(grantSink); // freed budget may unblock needy messages
    }

    private Peer peerFor(InetSocketAddress address) {
        Peer p = peers.get(address);
        if (p == null) {
            p = new Peer(address);
            p.heardTick = tick;
            peers.put(address, p);
        }
        return p;
    }

    private long allocateId() {
        while (true) {
            long id = nextId;
            nextId += idStep;
            if ((id & ~1L) != 0 && !clientRpcs.containsKey(id)) {
                return id;
            }
        }
    }

    private void sendBare(InetSocketAddress to, PacketType type, long senderId, Counter counter) {
        ControlPacket c = control(to);
        PacketEncoder.bare(c.buffer, type, senderId);
        queueControl(c, counter);
    }

    private void queueControl(ControlPacket c, Counter counter) {
        counters[counter.ordinal()]++;
        control.add(c);
    }

    private void drop(DropReason reason) {
        drops[reason.ordinal()]++;
        counters[Counter.PACKETS_DROPPED.ordinal()]++;
    }

    /** An encoded control packet waiting for {@link #pollTransmit}; pooled, so reused. */
    private static final class ControlPacket {
        static final int CAPACITY = 80;
        final ByteBuffer buffer = ByteBuffer.allocate(CAPACITY);
        InetSocketAddress destination;
    }

    /** A free control packet, its buffer cleared, for {@code to}. */
    private ControlPacket control(InetSocketAddress to) {
        ControlPacket c = controlPool.poll();
        if (c == null) {
            c = new ControlPacket();
        }
        c.buffer.clear();
        c.destination = to;
        return c;
    }

    // ------------------------------------------------------------------ introspection

    /** A counter's value. */
    public long counter(Counter c) {
        return counters[c.ordinal()];
    }

    /** Datagrams dropped for {@code reason}. */
    public long drops(DropReason reason) {
        return drops[reason.ordinal()];
    }

    /** Live client plus server RPCs. */
    public int liveRpcs() {
        return clientRpcs.size() + serverRpcCount;
    }

    public int liveClientRpcs() {
        return clientRpcs.size();
    }

    public int liveServerRpcs() {
        return serverRpcCount;
    }

    /** Live server RPCs for requests from one peer address: what {@code maxServerRpcsPerPeer} limits. */
    public int liveServerRpcs(InetSocketAddress peer) {
        Peer p = peers.get(peer);
        return p == null ? 0 : p.serverRpcs.size();
    }

    /**
     * Memory held for incoming messages not yet complete: their reassembly chunks plus the
     * engine's bookkeeping for each (an estimate, see docs/security.md). What
     * {@code maxBufferedBytes} limits. Delivered messages no longer count.
     */
    public long bufferedBytes() {
        return bufferedBytes;
    }

    /** The same, for the messages from one peer address: what {@code maxBufferedBytesPerPeer} limits. */
    public long bufferedBytes(InetSocketAddress peer) {
        Peer p = peers.get(peer);
        return p == null ? 0 : p.bufferedBytes;
    }

    /** The highest {@link #bufferedBytes()} ever reached by this engine. */
    public long bufferedBytesHighWater() {
        return bufferedBytesHighWater;
    }

    /** The highest {@link #bufferedBytes(InetSocketAddress)} ever reached by any one peer. */
    public long peerBufferedBytesHighWater() {
        return peerBufferedBytesHighWater;
    }

    /**
     * Bytes of outgoing messages the engine holds (requests and responses from
     * {@code startRequest}/{@code respond} until their payload is released): what
     * {@code maxOutgoingBytes} limits.
     */
    public long outgoingBytes() {
        return outgoingBytes;
    }

    /** The highest {@link #outgoingBytes()} ever reached by this engine. */
    public long outgoingBytesHighWater() {
        return outgoingBytesHighWater;
    }

    /** Bytes granted or unscheduled but not yet received, over all incoming messages. */
    public long incomingBytes() {
        return grants.incoming();
    }

    /**
     * Scheduled bytes (beyond each message's unscheduled prefix) granted and not yet received, an
     * upper bound: what the incoming budget {@code maxIncoming} limits.
     */
    public long grantedUnreceivedBytes() {
        long[] sum = {0};
        clientRpcs.forEachValue(r -> sum[0] += scheduledOutstanding(r.in));
        for (Peer p : peers.values()) {
            p.serverRpcs.forEachValue(r -> sum[0] += scheduledOutstanding(r.in));
        }
        return sum[0];
    }

    private long scheduledOutstanding(IncomingMessage in) {
        if (in == null) {
            return 0;
        }
        return Math.max(0, in.granted - Math.max(in.received(), Math.min(in.length, unscheduledLimit)));
    }

    /** Ids remembered for finished server RPCs (expire after {@code tombstoneTicks}). */
    public int tombstones() {
        int n = 0;
        for (Peer p : peers.values()) {
            n += p.tombstones.size();
        }
        return n;
    }

    /** Peers known (per-peer state is small and swept when idle). */
    /**
     * The smoothed round trip to {@code peer} in ns (a request's last byte to its response's first,
     * server time included), or 0 before a sample: it stretches the RESEND and NEED_ACK timers.
     */
    public long smoothedRttNanos(InetSocketAddress peer) {
        Peer p = peers.get(peer);
        return p == null ? 0 : p.rtt.smoothedNanos();
    }

    public int peers() {
        return peers.size();
    }

    /**
     * True when the engine holds no per-RPC state at all: no RPCs, no queued packets or events, no
     * buffered bytes, no pending acks and no tombstones.
     */
    public boolean isQuiescent() {
        if (liveRpcs() != 0 || !control.isEmpty() || !events.isEmpty() || bufferedBytes != 0 || outgoingBytes != 0
                || grants.incoming() != 0 || grants.size() != 0 || senders.size() != 0) {
            return false;
        }
        for (Peer p : peers.values()) {
            if (!p.idle()) {
                return false;
            }
        }
        return true;
    }

    /** A one-line summary of the engine's state, for logs and failing tests. */
    public String describe() {
        return "rpcs=" + clientRpcs.size() + "c/" + serverRpcCount + "s buffered=" + bufferedBytes
                + " outgoing=" + outgoingBytes
                + " incoming=" + grants.incoming() + " grantable=" + grants.size()
                + " sendq=" + senders.size() + " control=" + control.size() + " events=" + events.size()
                + " tombstones=" + tombstones() + " peers=" + peers.size();
    }
}
