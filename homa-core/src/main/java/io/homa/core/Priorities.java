package io.homa.core;

import io.homa.core.wire.DecodedPacket;
import io.homa.core.wire.DropReason;
import io.homa.core.wire.WireFormat;

import java.net.InetSocketAddress;
import java.util.Arrays;

/**
 * Priority levels and cutoffs (Linux Homa: unscheduled levels in homa_outgoing.c, cutoffs per
 * peer in homa_peer.c). Each receiver announces its cutoffs, the longest message it wants at each
 * unscheduled level; a sender sends unscheduled bytes at the level the receiver's cutoffs give
 * the message's length, and scheduled bytes at the level the receiver's grant names. Control
 * packets go at the highest level. CUTOFFS also say how many unscheduled bytes per message the
 * receiver accepts (homa-java's own field, not in Linux Homa): a sender sends a peer no more than
 * that once it knows it, so that a receiver set lower than its sender does not drop the excess.
 */
final class Priorities {
    /** The level of every control packet. */
    static final int CONTROL = WireFormat.MAX_PRIORITY;

    /** What an engine that does not announce its unscheduled bytes is taken to accept: that era's default. */
    static final int LEGACY_UNSCHEDULED_BYTES = 40_000;

    private final EngineConfig cfg;
    private final EngineCounters counters;
    private final RpcTable rpcs;
    private final ControlPackets control;
    private final int[] ourCutoffs;
    /** Our unscheduled limit in the units CUTOFFS carry (rounded down, so never more than we accept). */
    private final int ourUnscheduledUnits;
    /**
     * The version of what we announce, which never changes while the engine runs: a digest of it,
     * so that a peer that learned an earlier engine's values on this address (a restart with
     * other settings) sees its version as stale and hears the new ones.
     */
    private final int ourVersion;

    Priorities(EngineConfig cfg, EngineCounters counters, RpcTable rpcs, ControlPackets control) {
        this.cfg = cfg;
        this.counters = counters;
        this.rpcs = rpcs;
        this.control = control;
        this.ourCutoffs = cfg.unscheduledCutoffs();
        this.ourUnscheduledUnits = Math.min(WireFormat.MAX_UNSCHEDULED_UNITS, cfg.unscheduledLimit() / WireFormat.UNSCHEDULED_UNIT);
        this.ourVersion = version(ourCutoffs, ourUnscheduledUnits);
    }

    /**
     * A version in 2..65,535 that differs when what is announced does, most likely: never 0
     * ("none" on the wire) nor 1 (what every engine announced before the version was a digest).
     */
    static int version(int[] cutoffs, int unscheduledUnits) {
        int h = 31 * Arrays.hashCode(cutoffs) + unscheduledUnits;
        h *= 0x9E3779B1; // spread the low bits a small change of units moves
        h ^= h >>> 16;
        return 2 + Integer.remainderUnsigned(h, 0xFFFE);
    }

    /** Level of the byte at {@code offset} of {@code m}: unscheduled from the receiver's cutoffs, else granted. */
    int priorityAt(OutgoingMessage m, int offset) {
        if (offset < m.unscheduledLimit || m.length == 0) {
            return unscheduledPriority(m.rpc.peer, m.length);
        }
        return m.grantPriority;
    }

    /** The unscheduled level for a message of {@code length} to {@code peer}, from its cutoffs once known. */
    int unscheduledPriority(Peer peer, int length) {
        if (cfg.unscheduledAtLevelZeroForTests) {
            return 0;
        }
        if (peer.cutoffs == null) {
            return cfg.defaultUnscheduledPriority;
        }
        return levelFor(peer.cutoffs, length);
    }

    /** The unscheduled level a sender with our cutoffs uses for a message of {@code length}. */
    int ourUnscheduledPriority(int length) {
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

    /**
     * A DATA packet for {@code rpc} said its sender knows cutoff version {@code theirs}: if that is
     * not ours, tell the peer our cutoffs (at most once per {@code cutoffsIntervalNanos}).
     */
    void announceIfStale(long now, Rpc rpc, int theirs) {
        if (theirs == ourVersion) {
            return;
        }
        Peer peer = rpc.peer;
        if (peer.cutoffsSentAt != Long.MIN_VALUE && now - peer.cutoffsSentAt < cfg.cutoffsIntervalNanos) {
            return;
        }
        peer.cutoffsSentAt = now;
        control.cutoffs(peer.address, rpc.id, ourCutoffs, ourVersion, ourUnscheduledUnits);
    }

    /** A CUTOFFS packet: the peer's levels for our unscheduled bytes to it, and how many it accepts. */
    void onCutoffs(InetSocketAddress from, DecodedPacket p) {
        Peer peer = rpcs.peer(from);
        if (peer == null) {
            counters.drop(DropReason.UNKNOWN_RPC);
            return;
        }
        if (peer.cutoffs == null) {
            peer.cutoffs = new int[WireFormat.PRIORITY_LEVELS];
        }
        System.arraycopy(p.cutoffs, 0, peer.cutoffs, 0, WireFormat.PRIORITY_LEVELS);
        peer.cutoffVersion = p.cutoffVersion;
        peer.unscheduledAccepted = acceptedBy(p.unscheduledUnits);
    }

    /**
     * The unscheduled bytes a peer accepts, from its CUTOFFS' {@code unscheduled_units}: 0 is an
     * engine from before the field, which accepts its own setting, 40,000 (the default of every
     * engine then) unless its user changed it, so it is taken at that; the field's largest value
     * means "at least this much", so it limits nothing.
     */
    static int acceptedBy(int units) {
        if (units == 0) {
            return LEGACY_UNSCHEDULED_BYTES;
        }
        return units == WireFormat.MAX_UNSCHEDULED_UNITS ? Integer.MAX_VALUE : units * WireFormat.UNSCHEDULED_UNIT;
    }
}
