package io.homa.core;

import io.homa.core.wire.PacketType;

import java.net.InetSocketAddress;

/**
 * Response DATA for a client RPC this engine does not have: the RPC finished, was aborted or timed
 * out, or never existed here (someone forged a request with our address, and its server answers
 * us). We answer RPC_UNKNOWN, so that the server frees its RPC now instead of holding the response
 * until it times out. Linux Homa drops such DATA silently (homa_dispatch_pkts answers RPC_UNKNOWN
 * to an unknown RESEND only); answering costs a 12-byte packet per DATA packet, never more than
 * the DATA that caused it, so it amplifies nothing. A burst of DATA for one such RPC gets one
 * answer (the next packets come from the same send), and the answers are rationed to
 * {@link #ANSWERS_PER_TICK} per tick of time so that a flood of forged DATA cannot make us send
 * more than that.
 */
final class StrayResponses {
    /** RPC_UNKNOWN answers to stray DATA per tick of time (about 3 Mbit/s at 1 ms ticks). */
    static final int ANSWERS_PER_TICK = 32;

    private final long tickNanos;
    private final ControlPackets control;
    /** The tick of time ({@code now / tickNanos}) the ration belongs to. */
    private long rationTick = Long.MIN_VALUE;
    private int answersLeft;
    /** The stray RPC answered last in this tick, so that the rest of its burst is not answered again. */
    private long lastSenderId;
    private InetSocketAddress lastFrom;

    StrayResponses(EngineConfig cfg, ControlPackets control) {
        this.tickNanos = cfg.tickNanos;
        this.control = control;
    }

    /**
     * Answers DATA from {@code from} whose sender id {@code senderId} (odd: a server's) names no
     * client RPC of ours. Time, not the engine's tick counter, sets the ration: an idle engine's
     * timer does not run.
     */
    void onData(long now, InetSocketAddress from, long senderId) {
        long tick = Math.floorDiv(now, tickNanos);
        if (tick != rationTick) {
            rationTick = tick;
            answersLeft = ANSWERS_PER_TICK;
            lastFrom = null;
        }
        if (senderId == lastSenderId && from.equals(lastFrom)) {
            return; // answered already in this tick
        }
        if (answersLeft > 0) {
            answersLeft--;
            lastSenderId = senderId;
            lastFrom = from;
            control.bare(from, PacketType.RPC_UNKNOWN, senderId ^ 1, Counter.PACKETS_SENT_RPC_UNKNOWN);
        }
    }
}
