package io.homa.core;

import io.homa.core.wire.PacketType;

/** Named counters of one engine (Aeron style: counters, not log lines). */
public enum Counter {
    PACKETS_SENT_DATA, PACKETS_SENT_GRANT, PACKETS_SENT_RESEND, PACKETS_SENT_RPC_UNKNOWN, PACKETS_SENT_BUSY,
    PACKETS_SENT_CUTOFFS, PACKETS_SENT_NEED_ACK, PACKETS_SENT_ACK, PACKETS_SENT_OVERLOADED,
    PACKETS_SENT_CANCEL, PACKETS_SENT_RPC_UNKNOWN_SINCE,
    PACKETS_RECEIVED_DATA, PACKETS_RECEIVED_GRANT, PACKETS_RECEIVED_RESEND, PACKETS_RECEIVED_RPC_UNKNOWN,
    PACKETS_RECEIVED_BUSY, PACKETS_RECEIVED_CUTOFFS, PACKETS_RECEIVED_NEED_ACK, PACKETS_RECEIVED_ACK,
    PACKETS_RECEIVED_OVERLOADED, PACKETS_RECEIVED_CANCEL, PACKETS_RECEIVED_RPC_UNKNOWN_SINCE,
    /** Datagram bytes sent (Homa header included, IP/UDP not). */
    BYTES_SENT,
    /** Datagram bytes received and accepted by the decoder. */
    BYTES_RECEIVED,
    /** Payload bytes sent again in answer to RESEND. */
    BYTES_RETRANSMITTED,
    /** DATA segments sent again in answer to RESEND. */
    PACKETS_RETRANSMITTED,
    /** DATA segments that carried only bytes already received. */
    DUPLICATE_DATA,
    /** Request packets for a server RPC that finished recently (a late duplicate). */
    LATE_DUPLICATE_REQUESTS,
    /** Invalid datagrams dropped (all reasons; see {@link HomaEngine#drops}). */
    PACKETS_DROPPED,
    CLIENT_RPCS_STARTED, CLIENT_RPCS_COMPLETED, CLIENT_RPCS_FAILED, CLIENT_RPCS_ABORTED,
    SERVER_RPCS_STARTED, SERVER_RPCS_COMPLETED,
    /** Server RPCs freed without an ACK because the client stayed silent. */
    SERVER_RPCS_TIMED_OUT,
    /** Server RPCs dropped on RPC_UNKNOWN from their client, or given up or refused by the application. */
    SERVER_RPCS_ABANDONED,
    /** Server RPCs freed because their client sent CANCEL (it gave the call up). */
    SERVER_RPCS_CANCELLED,
    /** Client RPCs whose request restarted after RPC_UNKNOWN. */
    REQUEST_RESTARTS,
    /**
     * Client RPCs failed with {@link RpcError#OUTCOME_UNKNOWN}: the server no longer knew a request
     * that an earlier incarnation of it may have run, and the call was not idempotent.
     */
    OUTCOMES_UNKNOWN,
    /** Client RPCs failed with a timeout. */
    TIMEOUTS,
    /** Times the pacer held data back (each poll refused for a busy link, so re-polls count again). */
    PACER_HOLDS,
    /** Timer calls that came for the pacer: it had held data back and asked to be woken. */
    PACER_WAKEUPS,
    /** Sum over {@link #PACER_WAKEUPS} of how late each came after the time asked for, in ns. */
    PACER_WAKEUP_LATE_NANOS,
    /** Grants that raised a sender's offset after it asked (via RESEND) beyond the grant: a lost GRANT. */
    LOST_GRANTS_RECOVERED,
    /** {@code startRequest} refused because the engine holds {@code maxRpcs} RPCs. */
    RPC_LIMIT_REFUSALS,
    /** {@code startRequest} or {@code respond} refused because {@code maxOutgoingBytes} would be exceeded. */
    OUTGOING_LIMIT_REFUSALS,
    /** Requests being received whose memory went to a better-ranked message (their clients restart). */
    MEMORY_EVICTIONS,
    /** Acknowledgements that rode on an outgoing DATA packet instead of an ACK packet. */
    ACKS_PIGGYBACKED,
    /** Round-trip samples taken (a request's last byte to its response's first). */
    RTT_SAMPLES,
    /** RESEND, NEED_ACK or BUSY packets put off to a later tick: the timer's share of the link was spent. */
    TIMER_PACKETS_DEFERRED,
    /** Timer ticks run. */
    TICKS,
    /** Datagrams that held several packets back to back (UDP GRO coalesced them; each is counted as received too). */
    COALESCED_DATAGRAMS,
    /**
     * RESENDs answered with BUSY and nothing sent again because we still owed the receiver granted
     * data (our own backlog, not a loss: the rule of Linux Homa's HomaModule).
     */
    RESENDS_ANSWERED_BUSY;

    private static final Counter[] VALUES = values();
    private static final Counter[] RECEIVED = new Counter[PacketType.values().length];

    static {
        for (PacketType t : PacketType.values()) {
            RECEIVED[t.ordinal()] = valueOf("PACKETS_RECEIVED_" + t.name());
        }
    }

    static Counter[] all() {
        return VALUES;
    }

    /** The counter of received packets of {@code type}. */
    static Counter received(PacketType type) {
        return RECEIVED[type.ordinal()];
    }
}
