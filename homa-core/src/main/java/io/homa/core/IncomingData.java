package io.homa.core;

import io.homa.core.wire.DecodedPacket;
import io.homa.core.wire.DropReason;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Collections;

/**
 * DATA packets in (Linux Homa's homa_incoming.c, its data half). Each packet is first admitted:
 * the checks that need state, then room in memory. Only an admitted packet creates what it needs
 * (a server RPC, an incoming message), is written into its message, and completes it: a whole
 * message is delivered as an event, a partial one waits for grants.
 */
final class IncomingData {
    private final EngineConfig cfg;
    private final EngineCounters counters;
    private final TickClock clock;
    private final RpcTable rpcs;
    private final MemoryLimits limits;
    private final GrantScheduler grants;
    private final ControlPackets control;
    private final Priorities priorities;
    private final Acks acks;
    private final EngineEvents events;
    private final int unscheduledLimit;
    private PayloadMemory memory = PayloadMemory.HEAP;
    /** Data arrived since the grants were last decided: {@link #scheduleGrants} has work. */
    private boolean grantsDue;

    IncomingData(EngineConfig cfg, EngineCounters counters, TickClock clock, RpcTable rpcs, MemoryLimits limits,
                 GrantScheduler grants, ControlPackets control, Priorities priorities, Acks acks,
                 EngineEvents events) {
        this.cfg = cfg;
        this.counters = counters;
        this.clock = clock;
        this.rpcs = rpcs;
        this.limits = limits;
        this.grants = grants;
        this.control = control;
        this.priorities = priorities;
        this.acks = acks;
        this.events = events;
        this.unscheduledLimit = cfg.unscheduledLimit();
    }

    void setPayloadMemory(PayloadMemory memory) {
        this.memory = memory;
    }

    /** A decoded DATA packet {@code p} from {@code from}; its payload is still in {@code datagram}. */
    void onData(long now, InetSocketAddress from, ByteBuffer datagram, DecodedPacket p) {
        if (p.ackId != 0) {
            // First, whatever becomes of the data: a server refusing new requests at maxRpcs is
            // the one that most needs the acks riding on them.
            acks.acknowledged(from, p.ackId);
        }
        boolean request = RpcIds.isClientId(p.senderId);
        // A request segment is for our server RPC (from, senderId); a response segment for our
        // client RPC senderId ^ 1. A request that starts a new RPC finds none: it is created below.
        Rpc rpc = request ? rpcs.serverRpc(from, p.senderId) : rpcs.clientRpc(p.senderId ^ 1);
        if (!(request ? admitRequest(from, p.senderId, rpc) : admitResponse(from, rpc))) {
            return;
        }
        IncomingMessage in = rpc == null ? null : rpc.in;
        int granted = admitSegment(p, in);
        if (granted < 0 || !admitMemory(from, p, rpc, in)) {
            return;
        }
        // The packet is acceptable: only now create what it needs.
        boolean newMessage = in == null;
        if (rpc == null) {
            rpc = createServerRpc(now, from, p.senderId);
            rpc.deadline = p.deadlineMillis == 0 ? 0 : now + p.deadlineMillis * 1_000_000L;
        }
        if (newMessage) {
            in = createMessage(rpc, p.messageLength, granted);
        }
        int added = write(in, datagram, p);
        heard(now, rpc, p, newMessage, added);
        complete(rpc, in);
    }

    // ------------------------------------------------------------------ admit

    /** A request segment: for a live receiving RPC, or starting one while the limits allow it. */
    private boolean admitRequest(InetSocketAddress from, long clientId, Rpc rpc) {
        if (rpc != null) {
            if (rpc.state != Rpc.State.SERVER_RECEIVING) {
                counters.bump(Counter.DUPLICATE_DATA);
                return false;
            }
            return true;
        }
        Peer peer = rpcs.peer(from);
        if (peer != null && peer.tombstones.contains(clientId)) {
            counters.bump(Counter.LATE_DUPLICATE_REQUESTS);
            return false;
        }
        if (rpcs.liveRpcs() >= cfg.maxRpcs) {
            counters.drop(DropReason.RPC_LIMIT);
            return false;
        }
        if (peer != null && peer.serverRpcs.size() >= cfg.maxServerRpcsPerPeer) {
            counters.drop(DropReason.PEER_RPC_LIMIT);
            return false;
        }
        return true;
    }

    /** A response segment: for our client RPC to that very peer, whose request has all gone out. */
    private boolean admitResponse(InetSocketAddress from, Rpc rpc) {
        if (rpc == null) {
            counters.drop(DropReason.UNKNOWN_RPC);
            return false;
        }
        if (!rpc.peer.address.equals(from)) {
            counters.drop(DropReason.WRONG_PEER);
            return false;
        }
        if (!rpc.out.fullySent()) {
            counters.drop(DropReason.WRONG_STATE);
            return false;
        }
        return true;
    }

    /**
     * The segment agrees with its message ({@code in}, or null if it starts one) and lies within
     * the grant.
     *
     * @return the message's grant, or -1 if the packet was dropped
     */
    private int admitSegment(DecodedPacket p, IncomingMessage in) {
        int granted;
        if (in == null) {
            // Trust the sender's unscheduled amount only up to our own limit plus a segment.
            granted = (int) Math.min(p.messageLength,
                    Math.min(p.incoming, (long) unscheduledLimit + cfg.maxDatagram()));
        } else if (p.messageLength != in.length) {
            counters.drop(DropReason.LENGTH_CHANGED);
            return -1;
        } else {
            granted = in.granted;
        }
        if (p.payloadLength > 0 && p.offset >= granted) {
            counters.drop(DropReason.BEYOND_GRANT);
            return -1;
        }
        return granted;
    }

    /**
     * Room in memory for what the packet would add (chunks and bookkeeping), within both buffer
     * limits, evicting worse-ranked messages if need be (see {@link MemoryLimits}).
     */
    private boolean admitMemory(InetSocketAddress from, DecodedPacket p, Rpc rpc, IncomingMessage in) {
        boolean newMessage = in == null;
        long need = newMessage ? IncomingMessage.footprintOfNew(rpc, p.messageLength, p.offset, p.payloadLength)
                : in.footprintGrowthFor(p.offset, p.payloadLength);
        if (need <= 0) {
            return true;
        }
        long remaining = newMessage ? p.messageLength : in.remaining();
        long rankSeq = newMessage ? Long.MAX_VALUE : in.seq;
        while (limits.overEngineLimit(need)) {
            if (!evict(rpcs.peers(), remaining, rankSeq, in)) {
                counters.drop(DropReason.BUFFER_LIMIT);
                return false;
            }
        }
        Peer owner = rpc == null ? rpcs.peer(from) : rpc.peer;
        while (owner != null && limits.overPeerLimit(owner, need)) {
            if (!evict(Collections.singleton(owner), remaining, rankSeq, in)) {
                counters.drop(DropReason.PEER_BUFFER_LIMIT);
                return false;
            }
        }
        return true;
    }

    /**
     * Frees the worst-ranked request being received from {@code candidates}, if it ranks below the
     * newcomer. Its client hears RPC_UNKNOWN at its next RESEND and restarts the request; nothing
     * was delivered, so nothing runs twice.
     *
     * @return whether memory was freed
     */
    private boolean evict(Iterable<Peer> candidates, long remaining, long seq, IncomingMessage self) {
        IncomingMessage worst = limits.evictable(candidates, remaining, seq, self);
        if (worst == null) {
            return false;
        }
        counters.bump(Counter.MEMORY_EVICTIONS);
        rpcs.end(worst.rpc);
        return true;
    }

    // ------------------------------------------------------------------ create

    private Rpc createServerRpc(long now, InetSocketAddress from, long clientId) {
        Rpc rpc = rpcs.newServerRpc(from, clientId);
        rpc.startedAt = now;
        counters.bump(Counter.SERVER_RPCS_STARTED);
        clock.arm(now);
        return rpc;
    }

    private IncomingMessage createMessage(Rpc rpc, int length, int granted) {
        IncomingMessage in = rpcs.newIncoming(rpc, length);
        in.granted = granted;
        rpc.in = in;
        grants.track(in);
        limits.charge(rpc.peer, in.footprint());
        return in;
    }

    // ------------------------------------------------------------------ write

    /** Writes the payload into the message. @return new bytes, 0 for a duplicate, -1 if refused */
    private int write(IncomingMessage in, ByteBuffer datagram, DecodedPacket p) {
        int n = p.payloadLength;
        if (n <= 0) {
            return 0;
        }
        long outstandingBefore = in.outstanding();
        long footprintBefore = in.footprint();
        int added;
        try {
            added = in.write(p.offset, datagram, p.payloadOffset, n, memory);
        } finally {
            // Even when an allocation failed part way (chunks already made stay the message's,
            // and are released with it at their full footprint).
            limits.charge(in.rpc.peer, in.footprint() - footprintBefore);
        }
        grants.received(in, outstandingBefore);
        if (added < 0) {
            counters.drop(DropReason.BUFFER_LIMIT); // too fragmented; the gap is asked for again later
        } else if (added == 0) {
            counters.bump(Counter.DUPLICATE_DATA);
        }
        return added;
    }

    // ------------------------------------------------------------------ complete

    /** The peer spoke about the RPC: round trip, progress, liveness, and our cutoffs if it lacks them. */
    private void heard(long now, Rpc rpc, DecodedPacket p, boolean newMessage, int added) {
        if (newMessage && rpc.client && rpc.timingRoundTrip && rpc.restarts == 0 && !p.retransmit) {
            // Karn's rule, made exact by the retransmit flag: an original packet answers the
            // original request, whatever RESENDs were sent meanwhile.
            rpc.peer.rtt.sample(now - rpc.requestSentAt);
            counters.bump(Counter.RTT_SAMPLES);
        }
        if (added > 0 || newMessage) {
            rpc.asks = 0; // progress: the next silence starts a fresh backoff
        }
        rpcs.heard(rpc);
        rpc.peer.heardTick = clock.tick(); // the peer is alive
        rpc.heard = true;
        priorities.announceIfStale(now, rpc, p.cutoffVersion);
    }

    /** Delivers a whole message; a partial one waits for grants, which the scheduler may now give. */
    private void complete(Rpc rpc, IncomingMessage in) {
        if (in.complete()) {
            deliver(rpc);
        } else if (in.granted < in.length) {
            grants.add(in);
        }
        grantsDue = true;
    }

    /**
     * Decides the grants that the data received since the last call allows: once per datagram,
     * or once per batch of datagrams (one decision for a run of segments, not one per segment).
     */
    void scheduleGrants() {
        if (grantsDue) {
            grantsDue = false;
            grants.schedule(control);
        }
    }

    private void deliver(Rpc rpc) {
        ReceivedMessage message = rpcs.takeIncoming(rpc);
        if (rpc.client) {
            counters.bump(Counter.CLIENT_RPCS_COMPLETED);
            if (counters.observer != EngineObserver.NONE) {
                counters.observer.clientRpcCompleted(rpc.peer.address, rpc.id, rpc.out.length, message.length(),
                        rpc.out.retransmittedBytes, rpc.out.grantPriority);
            }
            acks.owe(rpc.peer, rpc.id);
            events.response(rpc.id, rpc.peer.address, message);
            rpcs.end(rpc);
        } else {
            rpc.state = Rpc.State.SERVER_PROCESSING;
            events.request(rpc.clientId(), rpc.peer.address, message, rpc.deadline);
        }
    }
}
