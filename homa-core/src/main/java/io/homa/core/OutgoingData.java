package io.homa.core;

import io.homa.core.wire.DecodedPacket;
import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * Sending messages (Linux Homa's homa_outgoing.c, with the sender's answers to GRANT, RESEND and
 * RPC_UNKNOWN from homa_incoming.c). One segment writer sends new data and retransmissions alike,
 * grouping equal segments for GSO; GRANT raises what a message may send, RESEND queues a range
 * again, and RPC_UNKNOWN restarts a request the server has forgotten.
 */
final class OutgoingData {
    private final EngineConfig cfg;
    private final EngineCounters counters;
    private final RpcTable rpcs;
    private final SenderQueue senders;
    private final Pacer pacer;
    private final Priorities priorities;
    private final Acks acks;
    private final GrantScheduler grants;
    private final ControlPackets control;
    private final MemoryLimits limits;
    private final int segment;
    private final int unscheduledLimit;
    /** Whether DATA of large direct payloads is described by reference rather than copied. */
    private final boolean inPlace;

    OutgoingData(EngineConfig cfg, EngineCounters counters, RpcTable rpcs, SenderQueue senders, Pacer pacer,
                 Priorities priorities, Acks acks, GrantScheduler grants, ControlPackets control, MemoryLimits limits) {
        this.cfg = cfg;
        this.counters = counters;
        this.rpcs = rpcs;
        this.senders = senders;
        this.pacer = pacer;
        this.priorities = priorities;
        this.acks = acks;
        this.grants = grants;
        this.control = control;
        this.limits = limits;
        this.segment = cfg.segmentPayload();
        this.unscheduledLimit = cfg.unscheduledLimit();
        this.inPlace = cfg.sendPayloadByReference && segment >= MIN_IN_PLACE_SEGMENT;
    }

    /**
     * Queues the RPC's outgoing message (its room was checked by the caller): {@code payload}, or
     * {@code parts} ({@code payload} their first) if not null, or {@code source} if not null.
     */
    void start(Rpc rpc, ByteBuffer payload, ByteBuffer[] parts, OutgoingPayload source, int length) {
        rpc.out = rpcs.newOutgoing(rpc, payload, parts, source, length, unscheduledFor(rpc));
        limits.addOutgoing(rpc.out.length);
        senders.offer(rpc.out);
    }

    /**
     * What a message may send before its receiver grants anything. A response to a peer that has
     * not shown it is at its address ({@link Peer#proven}) sends whole segments up to its request's
     * length, one at least: a request forged with a victim's source address then makes us send the
     * victim about what the forger sent us, not {@code unscheduledBytes}. The real client grants
     * the rest as soon as the first segment arrives, so its first long response takes one round
     * trip longer; that grant proves it, and later responses go at full speed.
     */
    private int unscheduledFor(Rpc rpc) {
        int limit = unscheduledLimitTo(rpc.peer);
        if (rpc.client || rpc.peer.proven) {
            return limit;
        }
        int segments = Math.max(1, rpc.requestLength / segment);
        return (int) Math.min(limit, (long) segments * segment);
    }

    /**
     * Our unscheduled limit, or less if the peer said it accepts less: what it said, rounded up to
     * whole segments (one at least). Rounding up is safe: the receiver takes a segment that starts
     * below its own limit plus one datagram, and every segment we send unscheduled starts below
     * what it said. A peer whose CUTOFFS have not arrived yet gets our own limit.
     */
    private int unscheduledLimitTo(Peer peer) {
        int theirs = peer.unscheduledAccepted;
        if (theirs == 0 || theirs >= unscheduledLimit) {
            return unscheduledLimit;
        }
        return Math.max(segment, (theirs + segment - 1) / segment * segment);
    }

    /**
     * The client granted or asked for the response we are sending: it is listening at its address.
     * (A forger that guesses when to send a GRANT could do the same, but it can grant itself the
     * whole response anyway: that is what the protocol trusts a GRANT with.)
     */
    private static void heardAboutResponse(Rpc rpc) {
        if (!rpc.client) {
            rpc.peer.proven = true;
        }
    }

    // ------------------------------------------------------------------ the segment writer

    /**
     * Shortest message sent by reference: below it copying the bytes costs less than the shell's
     * composite and two slices per datagram (a 100 B echo allocated about 420 B more per call in
     * place than copied; see docs/benchmarks.md).
     */
    static final int MIN_IN_PLACE_LENGTH = 1024;
    /**
     * Smallest segment payload for which messages are sent by reference at all. Each datagram sent
     * in place costs the shell a few hundred bytes of objects (slices, composite components, the
     * NIO views epoll takes of them): at 1,500 B datagrams that cost more CPU than copying the
     * bytes, at 9,000 B about the same, at loopback's 64 KB less (docs/benchmarks.md).
     */
    static final int MIN_IN_PLACE_SEGMENT = 16 * 1024;

    /** The bytes the pacer weighs for {@code m}'s next batch: its queued retransmission, else what is unsent. */
    int backlog(OutgoingMessage m) {
        return m.hasRetransmit() ? m.retransmitEnd() - m.retransmitStart() : m.remaining();
    }

    /**
     * Writes the next batch of {@code m}, its first queued retransmission or else new granted
     * bytes, into {@code out}: equal segments at one priority (the last may be shorter), as many as
     * GSO, the buffer and the pacer allow. Describes them in {@code t}.
     */
    void write(long now, OutgoingMessage m, ByteBuffer out, Transmit t) {
        boolean retransmit = m.hasRetransmit();
        int pos = retransmit ? m.retransmitStart() : m.sent;
        int end = retransmit ? m.retransmitEnd() : Math.min(m.granted, m.length);
        // The pacer weighs what is left of the range (retransmission) or of the message (new data).
        int paceEnd = retransmit ? end : m.length;
        int priority = retransmit ? m.retransmitPriority() : priorities.priorityAt(m, pos);
        if (retransmit && m.rpc.client) {
            m.rpc.timingRoundTrip = false; // Karn: the response now answers a repeated request
            m.rpc.roundTripSpoiled = true;
        }
        Peer peer = m.rpc.peer;
        int deadlineMillis = m.rpc.client ? timeLeftMillis(now, m.rpc.deadline) : 0;
        int first = Math.min(segment, end - pos);
        // By reference: only headers go into the buffer; the shell adds the payload in place.
        boolean byReference = inPlace && m.length >= MIN_IN_PLACE_LENGTH && m.direct();
        int startPos = pos;
        int outStart = out.position();
        int count = 0;
        int total = 0;
        while (true) {
            int n = Math.min(segment, end - pos);
            if (count > 0 && (n <= 0 || n > first || (!retransmit && priorities.priorityAt(m, pos) != priority)
                    || out.remaining() < WireFormat.DATA_HEADER + (byReference ? 0 : n) || !pacer.mayTransmit(now, paceEnd - pos))) {
                break;
            }
            int at = out.position();
            PacketEncoder.dataHeader(out, at, m.rpc.id, m.length, Math.min(m.granted, m.length), pos,
                    peer.cutoffVersion, retransmit, acks.piggyback(peer), deadlineMillis, n);
            if (byReference) {
                out.position(at + WireFormat.DATA_HEADER);
            } else {
                m.copyPayload(out, at + WireFormat.DATA_HEADER, pos, n);
                out.position(at + WireFormat.DATA_HEADER + n);
            }
            pos += n;
            if (retransmit) {
                counters.add(Counter.BYTES_RETRANSMITTED, n);
                m.retransmittedBytes += n;
            } else {
                m.sent = pos;
                if (m.length == 0) {
                    m.zeroSent = true;
                }
            }
            count++;
            total += WireFormat.DATA_HEADER + n;
            pacer.sent(now, WireFormat.DATA_HEADER + n);
            if (n < first || count >= cfg.maxGsoSegments) {
                break;
            }
        }
        if (retransmit) {
            m.retransmitted(pos);
        }
        counters.add(Counter.PACKETS_SENT_DATA, count);
        if (retransmit) {
            counters.add(Counter.PACKETS_RETRANSMITTED, count);
        }
        t.set(peer.address, priority, WireFormat.DATA_HEADER + first, count, total, true);
        if (byReference) {
            t.byReference(m.payload, m.source, startPos, WireFormat.DATA_HEADER, out.position() - outStart);
        }
        afterSend(now, m);
    }

    private void afterSend(long now, OutgoingMessage m) {
        if (!m.sendable()) {
            senders.pollHead();
        }
        Rpc rpc = m.rpc;
        if (rpc.client && !rpc.wholeRequestSent && m.fullySent()) {
            rpc.wholeRequestSent = true; // from now on the server may have it whole, and run it
            rpc.wholeRequestSentAt = now;
        }
        if (rpc.client && !rpc.timingRoundTrip && !rpc.roundTripSpoiled && rpc.restarts == 0 && m.fullySent()) {
            rpc.timingRoundTrip = true; // the response's first original packet closes the round trip
            rpc.requestSentAt = now;
        }
        if (!rpc.client && rpc.state == Rpc.State.SERVER_RESPONDING && m.fullySent()) {
            rpc.state = Rpc.State.SERVER_AWAITING_ACK;
            rpcs.heard(rpc);
        }
    }

    // ------------------------------------------------------------------ answers from the receiver

    /** A GRANT: the message may send up to the new offset, at the granted level. */
    void onGrant(InetSocketAddress from, DecodedPacket p) {
        Rpc rpc = rpcs.controlTarget(from, p.senderId);
        if (rpc == null) {
            counters.drop(rpcs.whyMissing(from, p.senderId));
            return;
        }
        rpcs.heard(rpc);
        OutgoingMessage out = rpc.out;
        if (out == null) {
            counters.drop(DropReason.WRONG_STATE);
            return;
        }
        heardAboutResponse(rpc);
        if (p.grantOrResendOffset > out.granted) {
            out.granted = Math.min(out.length, p.grantOrResendOffset);
            out.grantPriority = Math.min(p.priority, cfg.maxScheduledPriority);
            senders.offer(out);
        }
    }

    /**
     * A RESEND: send the range again, or say we are alive (BUSY) or that we do not know the RPC.
     *
     * @param incarnation this engine's incarnation (random), and
     * @param uptimeNanos how long it has been receiving (its age), for a client that asks
     */
    void onResend(InetSocketAddress from, DecodedPacket p, long incarnation, long uptimeNanos) {
        Rpc rpc = rpcs.controlTarget(from, p.senderId);
        if (rpc == null) {
            DropReason why = rpcs.whyMissing(from, p.senderId);
            Peer peer = rpcs.peer(from);
            if (why == DropReason.WRONG_PEER) {
                counters.drop(why);
            } else if (p.wantsUptime && RpcIds.isClientId(p.senderId)
                    && (peer == null || !peer.tombstones.contains(p.senderId))) {
                control.rpcUnknownSince(from, p.senderId ^ 1, incarnation, Math.max(0, uptimeNanos));
            } else {
                // Plain RPC_UNKNOWN also for a tombstoned id: its request ran here (in this
                // incarnation), so the client must not take the answer as "never ran" and send
                // it again; without the uptime, it fails a call that is not idempotent.
                control.bare(from, PacketType.RPC_UNKNOWN, p.senderId ^ 1, Counter.PACKETS_SENT_RPC_UNKNOWN);
            }
            return;
        }
        rpcs.heard(rpc);
        OutgoingMessage out = rpc.out;
        if (out == null) {
            // Server still receiving the request or processing it: alive, nothing to send.
            control.bare(from, PacketType.BUSY, rpc.id, Counter.PACKETS_SENT_BUSY);
            return;
        }
        heardAboutResponse(rpc);
        if (out.length == 0) {
            if (out.zeroSent) {
                out.zeroSent = false; // send the empty segment again
                senders.offer(out);
            }
            return;
        }
        int start = p.grantOrResendOffset;
        long end = p.resendLength < 0 ? out.sent : Math.min((long) out.length, (long) start + p.resendLength);
        boolean owed = out.sent < out.granted; // before a lost grant is made up below: that is no backlog of ours
        if (end > out.granted) {
            // The receiver asks beyond our grant: a GRANT was lost.
            out.granted = (int) end;
            counters.bump(Counter.LOST_GRANTS_RECOVERED);
        }
        int retransmitEnd = (int) Math.min(end, out.sent);
        // While we owe granted data (SRPT gave our link to other messages, or our loop ran late)
        // the silence is ours, not a loss: as Linux Homa's HomaModule does, answer BUSY and send
        // nothing again. What we sent is most likely on its way, and resending a gap of hundreds
        // of KB that arrives anyway costs both hosts the CPU they lack; a segment that was lost is
        // asked for again once we have caught up with the grant.
        if (!owed && start < retransmitEnd) {
            out.queueRetransmit(start, retransmitEnd, p.priority);
        } else {
            if (owed) {
                counters.bump(Counter.RESENDS_ANSWERED_BUSY);
            }
            control.bare(from, PacketType.BUSY, rpc.id, Counter.PACKETS_SENT_BUSY);
        }
        senders.offer(out);
    }

    /**
     * What a request's DATA says of its deadline: the whole milliseconds left (rounded down, so the
     * server never thinks it has more time than the client gives), at least 1 while the RPC is
     * live; 0 (none) for no deadline or one beyond what the field holds.
     */
    static int timeLeftMillis(long now, long deadline) {
        if (deadline == 0) {
            return 0;
        }
        long ms = (deadline - now) / 1_000_000L;
        return ms > WireFormat.MAX_DEADLINE_MILLIS ? 0 : (int) Math.max(1, ms);
    }

    /** OVERLOADED: the server refused our request unrun; the RPC fails at once. */
    void onOverloaded(InetSocketAddress from, DecodedPacket p) {
        Rpc rpc = rpcs.controlTarget(from, p.senderId);
        if (rpc == null) {
            counters.drop(rpcs.whyMissing(from, p.senderId));
        } else if (!rpc.client) {
            counters.drop(DropReason.WRONG_STATE); // only a server refuses
        } else {
            rpcs.fail(rpc, RpcError.OVERLOADED);
        }
    }

    /**
     * RPC_UNKNOWN or RPC_UNKNOWN_SINCE: the peer does not know the RPC. A server gives up; a client
     * starts its request over if that cannot run it twice, and else fails it as OUTCOME_UNKNOWN.
     *
     * <p>RPC_UNKNOWN_SINCE gives the server's incarnation and age; plain RPC_UNKNOWN (from a peer
     * that does not send the other) says nothing of restarts.
     */
    void onRpcUnknown(long now, InetSocketAddress from, DecodedPacket p) {
        Rpc rpc = rpcs.controlTarget(from, p.senderId);
        if (rpc == null) {
            counters.drop(rpcs.whyMissing(from, p.senderId));
            return;
        }
        if (!rpc.client) {
            if (p.type == PacketType.RPC_UNKNOWN_SINCE) {
                counters.drop(DropReason.WRONG_STATE); // only a server sends it
                return;
            }
            counters.bump(Counter.SERVER_RPCS_ABANDONED);
            rpcs.end(rpc);
            return;
        }
        boolean since = p.type == PacketType.RPC_UNKNOWN_SINCE;
        if (since) {
            learnIncarnation(rpc.peer, p.incarnation, now - p.uptimeNanos);
        }
        if (mayHaveRun(rpc, since) && !rpc.idempotent) {
            counters.bump(Counter.OUTCOMES_UNKNOWN);
            rpcs.fail(rpc, RpcError.OUTCOME_UNKNOWN);
            return;
        }
        // The server does not know our RPC and cannot have run it (it lost the request, or dropped
        // it unrun), or running it again is harmless: start over.
        if (++rpc.restarts > cfg.maxRestarts) {
            rpcs.fail(rpc, RpcError.PEER_UNKNOWN_RPC);
            return;
        }
        counters.bump(Counter.REQUEST_RESTARTS);
        counters.observer.requestRestarted(from, rpc.id, rpc.restarts);
        if (rpc.in != null) {
            rpcs.discardIncoming(rpc);
            grants.schedule(control); // the freed budget may unblock another message
        }
        senders.remove(rpc.out);
        rpc.out.restart();
        rpc.heard = false; // the server forgot it
        rpcs.heard(rpc);
        senders.offer(rpc.out);
    }

    /**
     * Whether a server that no longer knows {@code rpc} may have run it in an earlier incarnation.
     * The application only ever gets whole requests, so not before the whole request went out. After
     * that, only if the server that answers may have started after a copy of the whole request could
     * have reached its predecessor: it was up for less than the time since the whole request first
     * left (measured on our clock to the answer's arrival, so the one-way delays only make it more
     * cautious). Within one incarnation a request that the application dropped is remembered by it
     * and dropped again, so a server that was up all along cannot run it twice.
     */
    static boolean mayHaveRun(Rpc rpc, boolean incarnationKnown) {
        if (!rpc.wholeRequestSent) {
            return false;
        }
        return !incarnationKnown || rpc.peer.incarnationStartedBy > rpc.wholeRequestSentAt;
    }

    /** An answer of incarnation {@code incarnation}, which had started by {@code startedBy} (our clock). */
    static void learnIncarnation(Peer peer, long incarnation, long startedBy) {
        if (!peer.incarnationKnown || peer.incarnation != incarnation) {
            peer.incarnationKnown = true;
            peer.incarnation = incarnation; // a new one (or an old one's late answer): its own bound
            peer.incarnationStartedBy = startedBy;
        } else {
            peer.incarnationStartedBy = Math.min(peer.incarnationStartedBy, startedBy);
        }
    }
}
