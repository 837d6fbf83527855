package io.homa.core;

import java.net.InetSocketAddress;
import java.util.List;

/**
 * Answers to questions about the engine's state, for monitoring, logs and tests: a snapshot of
 * every RPC, the gauges that need a peer or a walk over the RPCs, and whether anything is held at
 * all. None of it is on the packet path; what visits every RPC or allocates says so.
 */
final class StateQueries {
    /** Gaps counted per RPC by {@link #rpcs}. */
    private static final int MAX_REPORTED_GAPS = 16;

    private final TickClock clock;
    private final RpcTable rpcs;
    private final MemoryLimits limits;
    private final GrantScheduler grants;
    private final SenderQueue senders;
    private final ControlPackets control;
    private final EngineEvents events;
    private final int unscheduledLimit;

    StateQueries(EngineConfig cfg, TickClock clock, RpcTable rpcs, MemoryLimits limits, GrantScheduler grants,
                 SenderQueue senders, ControlPackets control, EngineEvents events) {
        this.clock = clock;
        this.rpcs = rpcs;
        this.limits = limits;
        this.grants = grants;
        this.senders = senders;
        this.control = control;
        this.events = events;
        this.unscheduledLimit = cfg.unscheduledLimit();
    }

    /** Live server RPCs for requests from {@code peer}. */
    int liveServerRpcs(InetSocketAddress peer) {
        Peer p = rpcs.peer(peer);
        return p == null ? 0 : p.serverRpcs.size();
    }

    /** Memory held for incomplete messages from {@code peer}. */
    long bufferedBytes(InetSocketAddress peer) {
        Peer p = rpcs.peer(peer);
        return p == null ? 0 : p.bufferedBytes;
    }

    /** The smoothed round trip to {@code peer} (ns), or 0 before a sample or for an unknown peer. */
    long smoothedRttNanos(InetSocketAddress peer) {
        Peer p = rpcs.peer(peer);
        return p == null ? 0 : p.rtt.smoothedNanos();
    }

    /** Scheduled bytes granted and not yet received, over all incoming messages (visits every RPC). */
    long grantedUnreceivedBytes() {
        long[] sum = {0};
        rpcs.forEachLive(r -> sum[0] += r.in == null ? 0 : r.in.scheduledOutstanding(unscheduledLimit));
        return sum[0];
    }

    /** Adds a snapshot of every live RPC, oldest first, to {@code out} (allocates one record each). */
    void rpcs(long now, List<RpcState> out) {
        int[] gapPairs = new int[2 * MAX_REPORTED_GAPS];
        for (Rpc r : rpcs.allLive()) {
            OutgoingMessage o = r.out;
            IncomingMessage i = r.in;
            int gaps = i == null ? 0 : i.ranges.gaps(i.granted, gapPairs, MAX_REPORTED_GAPS);
            int priority = o != null ? o.grantPriority : i != null ? i.grantPriority : 0;
            out.add(new RpcState(r.id, r.peer.address, r.client, r.state.name(),
                    o == null ? -1 : o.length, o == null ? -1 : o.sent, o == null ? -1 : o.granted,
                    i == null ? -1 : i.length, i == null ? -1 : i.received(), i == null ? -1 : i.granted, gaps,
                    priority, silentTicks(r), now - r.startedAt));
        }
    }

    /** Ticks since a packet for the RPC last arrived (0 while the application works on it). */
    private int silentTicks(Rpc r) {
        return r.schedule == Rpc.Schedule.PARKED ? 0 : (int) Math.min(Integer.MAX_VALUE, clock.tick() - r.silentSince);
    }

    /** Whether the engine holds no per-RPC state at all. */
    boolean isQuiescent() {
        return rpcs.liveRpcs() == 0 && control.isEmpty() && events.isEmpty() && limits.bufferedBytes() == 0
                && limits.outgoingBytes() == 0 && grants.incoming() == 0 && grants.size() == 0
                && senders.size() == 0 && rpcs.allPeersIdle();
    }

    /** A one-line summary of the engine's state. */
    String describe() {
        return "rpcs=" + rpcs.clientRpcCount() + "c/" + rpcs.serverRpcCount() + "s buffered=" + limits.bufferedBytes()
                + " outgoing=" + limits.outgoingBytes()
                + " incoming=" + grants.incoming() + " grantable=" + grants.size()
                + " sendq=" + senders.size() + " control=" + control.size() + " events=" + events.size()
                + " tombstones=" + rpcs.tombstones() + " peers=" + rpcs.peerCount();
    }
}
