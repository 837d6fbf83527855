package io.homa.core;

import io.homa.core.wire.DropReason;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The RPCs of one engine and the peers they talk to (Linux Homa's homa_rpc.c and homa_peer.c):
 * client RPCs by id, server RPCs by peer and client id, the timer's schedule of them
 * ({@link TimerWheel}), the ids this engine hands out, the order in which messages were created,
 * and the end of an RPC, which lets go of all it holds.
 */
final class RpcTable {
    /**
     * Idle peers (no RPCs, acks or tombstones) are forgotten only when more than this many are
     * known: each costs a few hundred bytes, a peer that comes back keeps its cutoffs and round
     * trip, and the sweep walks every peer, which is worth a tick's time only when there are many.
     */
    private static final int PEER_SWEEP_THRESHOLD = 4096;
    /**
     * Outgoing messages kept for reuse, at most: enough for the RPCs one drain ends, so that a busy
     * engine makes no such object per RPC, and little memory when it calms down.
     */
    private static final int MAX_SPARE_MESSAGES = 64;
    /**
     * RPC objects kept for reuse, at most. An RPC that ends while waking (its response or reply
     * just came: most of them) comes back from the timer's wheel only at the next tick, all of
     * that tick's at once: enough for the RPCs a busy engine ends in a tick (about 400 at 400,000
     * calls/s with 1 ms ticks; 64 let most of them go to the collector), about 80 KB at most when
     * it calms down (and the peers the spares last served stay reachable until they are reused).
     */
    private static final int MAX_SPARE_RPCS = 512;

    private final EngineConfig cfg;
    private final TickClock clock;
    private final EngineCounters counters;
    private final EngineEvents events;
    private final GrantScheduler grants;
    private final ControlPackets control;
    private final MemoryLimits limits;
    private final SenderQueue senders;
    private final int roundTripCapTicks;
    private PayloadReleaseListener releaseListener = p -> { };

    private final Map<InetSocketAddress, Peer> peers = new HashMap<>();
    private final LongMap<Rpc> clientRpcs = new LongMap<>(64);
    private int serverRpcCount;
    private final TimerWheel wheel = new TimerWheel(this::spare);
    private final RpcIdSequence ids;
    /** Messages (both directions) in order of creation: SRPT breaks ties to the older. */
    private long seq;
    /** Outgoing messages of ended RPCs, to be filled again (at most {@link #MAX_SPARE_MESSAGES}). */
    private final ArrayDeque<OutgoingMessage> spareOutgoing = new ArrayDeque<>();
    /**
     * Ended RPCs that nothing refers to any more, to be new ones again (at most
     * {@link #MAX_SPARE_RPCS}): the timer's wheel hands them back (see {@link TimerWheel#remove}).
     */
    private final ArrayDeque<Rpc> spareRpcs = new ArrayDeque<>();
    /** Incoming messages delivered or discarded, to be filled again (at most {@link #MAX_SPARE_MESSAGES}). */
    private final ArrayDeque<IncomingMessage> spareIncoming = new ArrayDeque<>();

    /**
     * @param randomSeed the secret of the client ids (see {@link HomaEngine#HomaEngine})
     * @param roundTripCapTicks the cap on a peer's round trip in ticks (see {@link Peer#roundTripTicks})
     */
    RpcTable(EngineConfig cfg, long randomSeed, TickClock clock, EngineCounters counters,
             EngineEvents events, GrantScheduler grants, ControlPackets control,
             MemoryLimits limits, SenderQueue senders, int roundTripCapTicks) {
        this.cfg = cfg;
        this.clock = clock;
        this.counters = counters;
        this.events = events;
        this.grants = grants;
        this.control = control;
        this.limits = limits;
        this.senders = senders;
        this.roundTripCapTicks = roundTripCapTicks;
        this.ids = new RpcIdSequence(randomSeed, cfg.idShard, cfg.idShardCount);
    }

    void setPayloadReleaseListener(PayloadReleaseListener listener) {
        this.releaseListener = Objects.requireNonNull(listener, "listener");
    }

    // ------------------------------------------------------------------ creating

    /** A new client RPC to {@code server}, with a fresh id. */
    Rpc newClientRpc(InetSocketAddress server) {
        long id = allocateId();
        Peer peer = peerFor(server);
        Rpc rpc = newRpc(id, peer, true);
        rpc.silentSince = clock.tick();
        wheel.add(rpc);
        clientRpcs.put(id, rpc);
        peer.clientRpcs++;
        return rpc;
    }

    /** A new server RPC for the request {@code clientId} of {@code client}. */
    Rpc newServerRpc(InetSocketAddress client, long clientId) {
        Peer peer = peerFor(client);
        Rpc rpc = newRpc(clientId ^ 1, peer, false);
        rpc.silentSince = clock.tick();
        wheel.add(rpc);
        peer.serverRpcs.put(clientId, rpc);
        serverRpcCount++;
        return rpc;
    }

    private Rpc newRpc(long id, Peer peer, boolean client) {
        Rpc rpc = spareRpcs.poll();
        return rpc == null ? new Rpc(id, peer, client) : rpc.init(id, peer, client);
    }

    /** An ended RPC that nothing refers to any more (its last place was the timer's). */
    private void spare(Rpc rpc) {
        if (spareRpcs.size() < MAX_SPARE_RPCS) {
            spareRpcs.add(rpc); // DEAD until reused: code that ended it may still read it
        }
    }

    /** The next message's place in creation order. */
    long nextMessageSeq() {
        return seq++;
    }

    /** A new incoming message of {@code rpc}, in a reused object when one is spare. */
    IncomingMessage newIncoming(Rpc rpc, int length) {
        IncomingMessage m = spareIncoming.poll();
        long seq = nextMessageSeq();
        return m == null ? new IncomingMessage(rpc, length, seq) : m.init(rpc, length, seq);
    }

    /** A new outgoing message of {@code rpc}, in a reused object when one is spare. */
    OutgoingMessage newOutgoing(Rpc rpc, ByteBuffer payload, ByteBuffer[] parts, OutgoingPayload source, int length,
                                int unscheduledLimit) {
        OutgoingMessage m = spareOutgoing.poll();
        if (m == null) {
            m = new OutgoingMessage();
        }
        return m.init(rpc, payload, parts, source, length, nextMessageSeq(), unscheduledLimit);
    }

    private long allocateId() {
        while (true) {
            long id = ids.next();
            if (!clientRpcs.containsKey(id)) { // only after the counter wrapped round: never in practice
                return id;
            }
        }
    }

    /** The peer at {@code address}, known from now on (heard now, if new). */
    Peer peerFor(InetSocketAddress address) {
        Peer p = peers.get(address);
        if (p == null) {
            p = new Peer(address);
            p.heardTick = clock.tick();
            peers.put(address, p);
        }
        return p;
    }

    // ------------------------------------------------------------------ finding

    /** The peer at {@code address}, or null if unknown. */
    Peer peer(InetSocketAddress address) {
        return peers.get(address);
    }

    /** Our client RPC {@code id}, or null. */
    Rpc clientRpc(long id) {
        return clientRpcs.get(id);
    }

    /** Our server RPC for the request {@code clientId} of {@code client}, or null. */
    Rpc serverRpc(InetSocketAddress client, long clientId) {
        Peer peer = peers.get(client);
        return peer == null ? null : peer.serverRpcs.get(clientId);
    }

    /**
     * The RPC a control packet from {@code from} with {@code senderId} is about, or null (then
     * {@link #whyMissing} says why). Finding it marks the peer as heard.
     */
    Rpc controlTarget(InetSocketAddress from, long senderId) {
        if (!RpcIds.isClientId(senderId)) {
            Rpc rpc = clientRpcs.get(senderId ^ 1);
            if (rpc == null || !rpc.peer.address.equals(from)) {
                return null; // unknown, or someone else's RPC: never act on it
            }
            rpc.peer.heardTick = clock.tick(); // the peer is alive
            rpc.peer.proven = true; // and at its address: it named our id
            rpc.heard = true;
            return rpc;
        }
        Peer peer = peers.get(from);
        if (peer == null) {
            return null;
        }
        peer.heardTick = clock.tick();
        return peer.serverRpcs.get(senderId);
    }

    /** Why {@link #controlTarget} found nothing: the id names another peer's RPC, or none. */
    DropReason whyMissing(InetSocketAddress from, long senderId) {
        return !RpcIds.isClientId(senderId) && clientRpcs.containsKey(senderId ^ 1)
                ? DropReason.WRONG_PEER : DropReason.UNKNOWN_RPC;
    }

    // ------------------------------------------------------------------ ending

    /** Ends a client RPC with a FAILED event. */
    void fail(Rpc rpc, RpcError error) {
        counters.bump(Counter.CLIENT_RPCS_FAILED);
        events.failed(rpc.id, rpc.peer.address, error);
        end(rpc);
    }

    /** Removes every trace of an RPC (a server RPC leaves a tombstone against late duplicates). */
    void end(Rpc rpc) {
        if (rpc.state == Rpc.State.DEAD) {
            return;
        }
        if (rpc.in != null) {
            discardIncoming(rpc);
        }
        if (rpc.out != null) {
            releaseOutgoing(rpc);
        }
        Peer peer = rpc.peer;
        if (rpc.client) {
            clientRpcs.remove(rpc.id);
            peer.clientRpcs--;
        } else {
            peer.serverRpcs.remove(rpc.clientId());
            serverRpcCount--;
            if (rpc.state == Rpc.State.SERVER_AWAITING_ACK || rpc.state == Rpc.State.SERVER_RESPONDING
                    || rpc.endKnownToClient) {
                // The handler ran (there is a response), or the client knows how the RPC ended
                // (it acknowledged the response, cancelled the call, or was told OVERLOADED): any
                // request packet for this id still in the network (duplicated, or late by a round
                // trip or two on a slow path) is a late duplicate that must not run it (again),
                // kept for two round trips at least. Ended without the client knowing (it fell
                // silent, or the RPC was abandoned after its response went out), the client may
                // still be receiving: it must learn that the request ran, not that it is unknown,
                // or it would send it again (onResend answers a tombstoned id with RPC_UNKNOWN,
                // which a client takes as "may have run"). Kept until a client that hears nothing
                // more would have failed the call itself. An RPC abandoned before its response
                // (its server state lost) leaves none: its client may send the request again.
                long rtt = peer.roundTripTicks(cfg.tickNanos, roundTripCapTicks);
                long keep = Math.max(cfg.tombstoneTicks, 2L * rtt);
                if (!rpc.endKnownToClient) {
                    keep = Math.max(keep, cfg.timeoutTicks);
                }
                if (keep > 0) {
                    peer.tombstones.add(rpc.clientId(), clock.tick() + keep);
                }
            }
        }
        rpc.state = Rpc.State.DEAD;
        wheel.remove(rpc);
        grants.schedule(control); // freed budget may unblock needy messages
    }

    /** Delivers the RPC's complete incoming message: forgotten ({@link #releaseIncoming}), and handed over. */
    ReceivedMessage takeIncoming(Rpc rpc) {
        IncomingMessage in = releaseIncoming(rpc);
        ReceivedMessage message = in.toMessage();
        spare(in);
        return message;
    }

    /** Drops the RPC's outgoing message: out of the sender's queue, its bytes uncharged, its payload released. */
    void releaseOutgoing(Rpc rpc) {
        OutgoingMessage out = rpc.out;
        senders.remove(out); // out of the sender's queue: nothing refers to it from now on
        ByteBuffer payload = out.payload;
        OutgoingPayload source = out.source;
        limits.releaseOutgoing(out.length);
        rpc.out = null;
        out.clear();
        if (spareOutgoing.size() < MAX_SPARE_MESSAGES) {
            spareOutgoing.add(out);
        }
        if (source != null) {
            releaseListener.released(source);
        } else {
            releaseListener.released(payload);
        }
    }

    /** Drops the RPC's incoming message (aborted, evicted, restarted): forgotten, its chunks released. */
    void discardIncoming(Rpc rpc) {
        IncomingMessage in = releaseIncoming(rpc);
        in.discard();
        spare(in);
    }

    /**
     * Forgets the RPC's incoming message: out of the scheduler, its budget and memory uncharged.
     */
    private IncomingMessage releaseIncoming(Rpc rpc) {
        IncomingMessage in = rpc.in;
        if (rpc.client) {
            rpc.peer.proven = true; // its response data named our id: the server is at its address
        } else {
            rpc.requestLength = in.length;
        }
        grants.forget(in);
        limits.charge(rpc.peer, -in.footprint());
        rpc.in = null;
        return in;
    }

    private void spare(IncomingMessage in) {
        if (spareIncoming.size() < MAX_SPARE_MESSAGES) {
            in.rpc = null; // nothing of the RPC stays with it
            spareIncoming.add(in);
        }
    }

    // ------------------------------------------------------------------ the timer's schedule

    /** Which RPCs the timer visits on a tick. */
    TimerWheel wheel() {
        return wheel;
    }

    /**
     * A packet for the RPC arrived (or the application answered it): its silence starts over, and
     * the timer looks at it on the next tick, whatever it was waiting for.
     */
    void heard(Rpc rpc) {
        rpc.silentSince = clock.tick();
        wheel.wake(rpc);
    }

    /**
     * Every live RPC (awake, asleep or parked), oldest first: for introspection only (allocates,
     * and visits every RPC).
     */
    List<Rpc> allLive() {
        ArrayList<Rpc> all = new ArrayList<>(liveRpcs());
        forEachLive(all::add);
        all.sort(TimerWheel.BY_AGE);
        return all;
    }

    /** Visits every live RPC, in no particular order: for introspection only (visits every RPC). */
    void forEachLive(Consumer<Rpc> action) {
        clientRpcs.forEachValue(action);
        for (Peer p : peers.values()) {
            p.serverRpcs.forEachValue(action);
        }
    }

    // ------------------------------------------------------------------ peers and counts

    /** Every known peer (a live view: do not add or remove through it). */
    Collection<Peer> peers() {
        return peers.values();
    }

    int peerCount() {
        return peers.size();
    }

    /** Forgets idle peers once there are many (see {@link #PEER_SWEEP_THRESHOLD}). */
    void sweepIdlePeers() {
        if (peers.size() > PEER_SWEEP_THRESHOLD) {
            peers.values().removeIf(Peer::idle);
        }
    }

    int clientRpcCount() {
        return clientRpcs.size();
    }

    int serverRpcCount() {
        return serverRpcCount;
    }

    int liveRpcs() {
        return clientRpcs.size() + serverRpcCount;
    }

    /** Whether anything needs the timer: an RPC, a tombstone or an owed ack. */
    boolean hasTimedState() {
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

    int tombstones() {
        int n = 0;
        for (Peer p : peers.values()) {
            n += p.tombstones.size();
        }
        return n;
    }

    /** Whether no peer holds anything (see {@link Peer#idle}). */
    boolean allPeersIdle() {
        for (Peer p : peers.values()) {
            if (!p.idle()) {
                return false;
            }
        }
        return true;
    }
}
