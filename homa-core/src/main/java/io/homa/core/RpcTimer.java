package io.homa.core;

import io.homa.core.wire.DecodedPacket;
import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;

import java.net.InetSocketAddress;

/**
 * The timer's work on each tick (Linux Homa's homa_timer.c): the live RPCs, oldest first, are
 * checked for silence, and the peers' tombstones and owed acks are looked after. A tick visits
 * only the RPCs whose time may have come ({@link TimerWheel}): after each look, an RPC that waits
 * on its peer sleeps until the first tick at which its silence could make the timer act
 * ({@link #nextVisit}), a request the application works on is parked until it answers, and a
 * packet for a sleeping RPC wakes it for the next tick; the rest are looked at every tick, as
 * before, so that every decision is taken on the same tick, in the same order. For one RPC
 * ({@link #check}, Linux Homa's homa_timer_check_rpc) the decisions are, in order: a receiver
 * starving a message sends a keep-alive; a silent RPC times out; a finished response asks for its
 * ACK (NEED_ACK); anything else asks for what it misses (RESEND). Loss is detected per RPC (its
 * own silence), but an RPC times out only when its peer as a whole has been silent too: a peer
 * that answers other RPCs is alive and merely busy. Timer packets are rationed, per peer and tick
 * and to a share of the link, so that a thousand waiting RPCs do not flood an overloaded peer.
 */
final class RpcTimer {
    /** Bytes per second in one Mbit/s: 10^6 bits of 8 each. */
    private static final double BYTES_PER_SECOND_PER_MBPS = 125_000.0;
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
    /**
     * Gaps asked for in one go, one RESEND each: loss usually leaves a few holes, and a badly
     * fragmented message costs at most this many packets per ask (the rest are asked for later).
     */
    private static final int MAX_RESEND_GAPS = 4;

    private final EngineConfig cfg;
    private final EngineCounters counters;
    private final TickClock clock;
    private final RpcTable rpcs;
    private final ControlPackets control;
    private final Acks acks;
    private final Priorities priorities;
    private final int segment;
    private final int unscheduledLimit;
    private final int roundTripCapTicks;
    /** Bytes of timer packets this tick may still send, refilled each tick (see {@link #timerBudget}). */
    private long timerBytes;
    private final long timerBytesPerTick;
    private final long timerBytesMax;
    private final int[] gaps = new int[2 * MAX_RESEND_GAPS];

    RpcTimer(EngineConfig cfg, EngineCounters counters, TickClock clock, RpcTable rpcs, ControlPackets control,
             Acks acks, Priorities priorities) {
        this.cfg = cfg;
        this.counters = counters;
        this.clock = clock;
        this.rpcs = rpcs;
        this.control = control;
        this.acks = acks;
        this.priorities = priorities;
        this.segment = cfg.segmentPayload();
        this.unscheduledLimit = cfg.unscheduledLimit();
        this.roundTripCapTicks = roundTripCapTicks(cfg);
        // Timer packets (RESEND, NEED_ACK, BUSY) may take timerTrafficPercent of the link, a few
        // ticks' worth at once at most.
        this.timerBytesPerTick = Math.max(1, (long) (cfg.linkMbps * BYTES_PER_SECOND_PER_MBPS
                * cfg.timerTrafficPercent / 100 * cfg.tickNanos / 1e9));
        this.timerBytesMax = Math.max(4 * timerBytesPerTick, 4L * (WireFormat.RESEND_LENGTH + cfg.ipUdpOverhead));
        this.timerBytes = timerBytesMax;
    }

    /**
     * The cap on a peer's round trip in ticks, like the cap on the backoff, so that a peer with
     * slow answers is still asked several times before its RPCs time out.
     */
    static int roundTripCapTicks(EngineConfig cfg) {
        return Math.max(1, cfg.timeoutTicks / MIN_ASKS_PER_TIMEOUT);
    }

    /** One tick (the clock has just advanced). */
    void tick() {
        timerBytes = Math.min(timerBytes + timerBytesPerTick, timerBytesMax);
        TimerWheel wheel = rpcs.wheel();
        // Oldest first, so that when a peer's budget of timer packets runs out the oldest RPCs
        // were served (and every RPC gets its turn as the older ones hear back).
        Rpc rpc = wheel.startTick(clock.tick());
        while (rpc != null) {
            Rpc next = rpc.next; // check may end, park or put to sleep rpc
            check(rpc);
            if (rpc.schedule == Rpc.Schedule.AWAKE) {
                long at = nextVisit(rpc);
                if (at > clock.tick() + 1) {
                    wheel.sleep(rpc, at);
                }
            }
            rpc = next;
        }
        for (Peer p : rpcs.peers()) {
            p.expireTombstones(clock.tick());
            acks.flushIfDue(p); // no DATA to this peer carried them in time
        }
        rpcs.sweepIdlePeers();
    }

    /** BUSY: the peer is alive and working on the RPC; its silence starts over. */
    void onBusy(InetSocketAddress from, DecodedPacket p) {
        Rpc rpc = rpcs.controlTarget(from, p.senderId);
        if (rpc != null) {
            rpcs.heard(rpc);
        } else {
            counters.drop(rpcs.whyMissing(from, p.senderId));
        }
    }

    /** One tick of silence accounting for one RPC. */
    private void check(Rpc rpc) {
        if (rpc.state == Rpc.State.SERVER_PROCESSING) {
            // The application is working on it: nothing to do until it answers, so later ticks
            // skip it (HomaEngine.respond wakes it, and its silence starts from 0 then).
            rpcs.wheel().park(rpc);
            return;
        }
        rpc.peer.budget(clock.tick(), RESENDS_PER_PEER_PER_TICK, NEED_ACKS_PER_PEER_PER_TICK, BUSY_PER_PEER_PER_TICK);
        OutgoingMessage out = rpc.out;
        if (out != null && out.hasNewData()) {
            rpc.silentSince = clock.tick(); // we owe the peer granted data: our pacer's turn, not its silence
            return;
        }
        if (waitingForOurGrants(rpc)) {
            keepAlive(rpc);
            return;
        }
        rpc.waitTicks = 0;
        if (timedOut(rpc)) {
            expire(rpc);
            return;
        }
        int rto = rpc.peer.roundTripTicks(cfg.tickNanos, roundTripCapTicks);
        if (rpc.state == Rpc.State.SERVER_AWAITING_ACK) {
            askForAck(rpc, rto);
        } else if (rpc.client || rpc.in != null) {
            // (A server sending its response has nothing to ask for: the client asks.)
            askForMissing(rpc, rto);
        }
    }

    // ------------------------------------------------------------------ keep-alive

    /** Whether everything we granted has arrived, so that the sender waits for our grants. */
    private static boolean waitingForOurGrants(Rpc rpc) {
        boolean receiving = rpc.client ? rpc.out.fullySent() : rpc.state == Rpc.State.SERVER_RECEIVING;
        IncomingMessage in = rpc.in;
        return receiving && in != null && in.received() >= in.granted;
    }

    /**
     * Tells a sender we starve that we live, often enough that it never times out (it gives up
     * only after timeoutTicks of silence from the whole peer), not every few ticks: SRPT may
     * starve a long message for seconds (see docs/benchmarks.md for what a keep-alive per
     * resend interval cost).
     */
    private void keepAlive(Rpc rpc) {
        Peer peer = rpc.peer;
        rpc.silentSince = clock.tick();
        if (++rpc.waitTicks >= keepAliveTicks() && peer.busyLeft > 0 && timerBudget(WireFormat.BARE_LENGTH)) {
            peer.busyLeft--;
            rpc.waitTicks = 0;
            control.bare(peer.address, PacketType.BUSY, rpc.id, Counter.PACKETS_SENT_BUSY);
        }
    }

    /** How often a receiver starving a message (SRPT) tells its sender that it is alive. */
    private int keepAliveTicks() {
        return Math.max(cfg.resendIntervalTicks, cfg.timeoutTicks / MIN_ASKS_PER_TIMEOUT);
    }

    // ------------------------------------------------------------------ timeout

    /**
     * Whether the RPC was silent for timeoutTicks: a finished response waiting for its ACK on its
     * own silence, everything else only if the whole peer was silent that long too.
     */
    private boolean timedOut(Rpc rpc) {
        boolean peerSilent = clock.tick() - rpc.peer.heardTick >= cfg.timeoutTicks;
        return silence(rpc) >= cfg.timeoutTicks && (rpc.state == Rpc.State.SERVER_AWAITING_ACK || peerSilent);
    }

    /** A client RPC fails with a timeout; a server RPC is freed without telling anyone. */
    private void expire(Rpc rpc) {
        if (rpc.client) {
            counters.bump(Counter.TIMEOUTS);
            counters.observer.clientRpcTimedOut(rpc.peer.address, rpc.id);
            rpcs.fail(rpc, RpcError.TIMEOUT);
        } else {
            counters.bump(Counter.SERVER_RPCS_TIMED_OUT);
            rpcs.end(rpc);
        }
    }

    // ------------------------------------------------------------------ NEED_ACK

    /**
     * A finished response asks its client for the ACK. The client holds an ack up to
     * ackDelayTicks hoping to piggy-back it, and it needs a round trip to reach us: asking
     * earlier only races it.
     */
    private void askForAck(Rpc rpc, int rto) {
        Peer peer = rpc.peer;
        if (silence(rpc) >= ackThreshold(rto) && askDue(rpc, rto)
                && peer.needAcksLeft > 0 && (timerBudget(WireFormat.BARE_LENGTH) || nearTimeout(rpc))) {
            peer.needAcksLeft--;
            asked(rpc);
            control.bare(peer.address, PacketType.NEED_ACK, rpc.id, Counter.PACKETS_SENT_NEED_ACK);
        }
    }

    // ------------------------------------------------------------------ RESEND

    /** A receiver (or a client waiting for its response) asks for what it misses. */
    private void askForMissing(Rpc rpc, int rto) {
        Peer peer = rpc.peer;
        if (silence(rpc) >= resendThreshold(rpc, rto) && askDue(rpc, rto) && peer.resendsLeft > 0
                && (timerBudget(WireFormat.RESEND_LENGTH) || nearTimeout(rpc))) {
            peer.resendsLeft--;
            asked(rpc);
            requestMissing(rpc);
        }
    }

    /** The silence after which an RPC asks for what it misses. */
    private int resendThreshold(Rpc rpc, int rto) {
        OutgoingMessage out = rpc.out;
        int threshold = Math.max(cfg.resendTicks, rto);
        if (rpc.client && rpc.heard && !out.fullySent() && out.sent >= out.granted) {
            // Our request waits for grants from a server that knows it: while it does, it sends
            // keep-alives, and a lost GRANT comes back as its RESEND below the grant. Ask only
            // when two keep-alives were missed: the server may have forgotten the request (it
            // restarted, or evicted it for memory) and answers RPC_UNKNOWN, so we restart.
            threshold = Math.max(threshold, 2 * keepAliveTicks());
        }
        return threshold;
    }

    /** The silence after which a finished response asks for its ACK. */
    private int ackThreshold(int rto) {
        return Math.max(cfg.needAckTicks, cfg.ackDelayTicks + rto);
    }

    /** Asks the peer for what we miss: the gaps below the grant, or (a client with nothing) the start. */
    private void requestMissing(Rpc rpc) {
        IncomingMessage in = rpc.in;
        if (in == null) {
            if (rpc.client) {
                // Nothing of the response yet: ask for its first segment only. If the response
                // was lost, that segment brings its length and the next asks name the gaps; if it
                // is merely late, one segment is all that is duplicated.
                control.resend(rpc.peer.address, rpc.id, 0, segment, cfg.defaultUnscheduledPriority);
            }
            return;
        }
        int n = in.ranges.gaps(in.granted, gaps, MAX_RESEND_GAPS);
        for (int i = 0; i < n; i++) {
            int start = gaps[2 * i];
            int end = gaps[2 * i + 1];
            int priority = start < unscheduledLimit ? priorities.ourUnscheduledPriority(in.length) : in.grantPriority;
            control.resend(rpc.peer.address, rpc.id, start, end - start, priority);
        }
    }

    // ------------------------------------------------------------------ pacing the asks

    /**
     * Whether the RPC has been silent for half its timeout: it asks even when the timer's share of
     * the link is spent, so that the share can never keep a live peer from being asked before
     * the RPC times out (the per-peer ration still applies).
     */
    private boolean nearTimeout(Rpc rpc) {
        return silence(rpc) >= cfg.timeoutTicks / 2;
    }

    /**
     * Takes one timer packet of {@code length} bytes from this tick's share of the link (see
     * {@code timerTrafficPercent}); false, and counted, if the share is spent: the RPC asks on a
     * later tick. The balance may go one packet negative (a packet goes whenever it is positive).
     */
    private boolean timerBudget(int length) {
        if (timerBytes <= 0) {
            counters.bump(Counter.TIMER_PACKETS_DEFERRED);
            return false;
        }
        timerBytes -= length + cfg.ipUdpOverhead;
        return true;
    }

    /**
     * Whether the RPC may ask again: the first ask after silence, then after resendIntervalTicks
     * (or the round-trip timeout, if longer), doubled for each ask that brought no progress (as
     * TCP backs off its retransmission timer) so an overloaded path is not fed ever more requests.
     */
    private boolean askDue(Rpc rpc, int rto) {
        return rpc.asks == 0 || clock.tick() - rpc.lastAskTick >= askInterval(rpc, rto);
    }

    /** The ticks between asks, once the RPC has asked. */
    private long askInterval(Rpc rpc, int rto) {
        long interval = (long) Math.max(cfg.resendIntervalTicks, rto) << Math.min(rpc.asks - 1, MAX_ASK_BACKOFF_SHIFT);
        return Math.min(interval, keepAliveTicks());
    }

    // ------------------------------------------------------------------ the next look

    /** Ticks since the RPC's last sign of life. */
    private long silence(Rpc rpc) {
        return clock.tick() - rpc.silentSince;
    }

    /**
     * The first tick after this one at which {@link #check} may do more for the RPC than count its
     * silence, if nothing happens to it meanwhile (a packet for it wakes it: {@link RpcTable#heard}):
     * the next tick if we owe its peer data or grants (it is not silent then), else the first tick
     * at which it may time out or ask again. Each threshold is taken with a round trip of 0, the
     * least it can be, since the peer's round trip may shrink while the RPC sleeps: an RPC whose
     * round trip delays its ask is woken early and looked at every tick until it asks, as before.
     * Exact otherwise: silence, the backoff and the thresholds change only on a look or a packet.
     */
    private long nextVisit(Rpc rpc) {
        long next = clock.tick() + 1;
        OutgoingMessage out = rpc.out;
        if ((out != null && out.hasNewData()) || waitingForOurGrants(rpc)) {
            return next;
        }
        long at = rpc.silentSince + cfg.timeoutTicks;
        if (rpc.state == Rpc.State.SERVER_AWAITING_ACK) {
            at = Math.min(at, askTick(rpc, ackThreshold(0)));
        } else {
            at = Math.max(at, rpc.peer.heardTick + cfg.timeoutTicks); // the peer must be silent too
            if (rpc.client || rpc.in != null) {
                at = Math.min(at, askTick(rpc, resendThreshold(rpc, 0)));
            }
        }
        return Math.max(at, next);
    }

    /** The first tick at which the RPC's silence and backoff let it ask, for a round trip of 0. */
    private long askTick(Rpc rpc, int threshold) {
        long at = rpc.silentSince + threshold;
        return rpc.asks == 0 ? at : Math.max(at, rpc.lastAskTick + askInterval(rpc, 0));
    }

    private void asked(Rpc rpc) {
        rpc.lastAskTick = clock.tick();
        if (rpc.asks <= MAX_ASK_BACKOFF_SHIFT) {
            rpc.asks++;
        }
    }
}
