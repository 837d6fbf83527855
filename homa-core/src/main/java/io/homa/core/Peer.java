package io.homa.core;

import java.net.InetSocketAddress;

/**
 * What this engine knows about one remote socket: the cutoffs it announced (for the priority of
 * our unscheduled bytes to it), when we last told it ours, its server RPCs on our side, acks we
 * owe it, and ids of its finished RPCs we still remember.
 */
final class Peer {
    final InetSocketAddress address;
    /** The peer's cutoffs (index = level), or {@code null} until it sends CUTOFFS. */
    int[] cutoffs;
    /** Version of {@link #cutoffs}; 0 while unknown. */
    int cutoffVersion;
    /**
     * Unscheduled bytes per message the peer accepts, from its CUTOFFS (see
     * {@code Priorities#onCutoffs}); 0 until its CUTOFFS arrive.
     */
    int unscheduledAccepted;
    /** When we last sent this peer our CUTOFFS (ns); MIN_VALUE: never. */
    long cutoffsSentAt = Long.MIN_VALUE;
    /** Server RPCs for this peer's requests, by client id. */
    final LongMap<Rpc> serverRpcs = new LongMap<>(4);
    /** Client RPCs of ours to this peer that are still live. */
    int clientRpcs;
    /** Client ids of responses we finished and still have to acknowledge to this peer. */
    final LongQueue pendingAcks = new LongQueue(4);
    /** Tick at which {@link #pendingAcks} last became non-empty (the age of its oldest entry, at most). */
    long oldestAckTick;
    /**
     * Client: the server incarnation this peer last named in RPC_UNKNOWN_SINCE, and the latest
     * time (our clock) by which it had certainly started: the least, over its answers, of when one
     * arrived less the uptime it gave. Each answer's delay only makes its bound later; the least is
     * the closest to the truth, so one delayed answer does not make a request look younger than
     * the server. Valid while {@link #incarnationKnown}.
     */
    long incarnation;
    long incarnationStartedBy;
    boolean incarnationKnown;
    /** Round trips to this peer, for how long silence must last before we ask again. */
    final RttEstimator rtt = new RttEstimator();
    /** Memory charged for this peer's incomplete incoming messages (see {@link IncomingMessage#footprint()}). */
    long bufferedBytes;
    /** Client ids of recently finished server RPCs, with the tick at which they expire. */
    final Tombstones tombstones = new Tombstones();

    /**
     * The peer has shown that it really is at {@link #address}: it named an id of ours that only
     * our packets to that address carried (a response or control packet about one of our client
     * RPCs), or it granted or asked for a response we were sending it. Until then a response to
     * it sends little without a grant, so that a request forged with its address cannot make us
     * flood it (see {@code OutgoingData#start}).
     */
    boolean proven;
    /** Tick at which a valid packet last came from this peer (peer-level liveness). */
    long heardTick;
    /** The tick {@link #resendsLeft}, {@link #needAcksLeft} and {@link #busyLeft} belong to. */
    long budgetTick = Long.MIN_VALUE;
    /** Timer packets this peer may still get in the current tick (Linux Homa: one RESEND per peer). */
    int resendsLeft;
    int needAcksLeft;
    int busyLeft;

    Peer(InetSocketAddress address) {
        this.address = address;
    }

    /** Opens this tick's budget of timer packets to the peer. */
    void budget(long tick, int resends, int needAcks, int busy) {
        if (budgetTick != tick) {
            budgetTick = tick;
            resendsLeft = resends;
            needAcksLeft = needAcks;
            busyLeft = busy;
        }
    }

    /**
     * The measured round-trip timeout to this peer in whole ticks (0 before any sample), at most
     * {@code capTicks}.
     */
    int roundTripTicks(long tickNanos, int capTicks) {
        long nanos = rtt.timeoutNanos();
        if (nanos == 0) {
            return 0;
        }
        long ticks = (nanos + tickNanos - 1) / tickNanos + 1; // +1: ticks are coarse
        return (int) Math.min(ticks, capTicks);
    }

    boolean idle() {
        return serverRpcs.isEmpty() && clientRpcs == 0 && pendingAcks.isEmpty() && tombstones.isEmpty();
    }

    void expireTombstones(long tick) {
        tombstones.expire(tick);
    }
}
