package io.homa.core;

import io.homa.core.wire.WireFormat;

/**
 * Keeps the transmit backlog short, as Linux Homa's pacer does: it estimates when the link will
 * have sent everything handed to it so far, and holds long messages back while that estimate is
 * more than {@code maxNicQueueNanos} ahead, so that a new short message never waits behind a long
 * queue. Short messages and control packets are never held back (but still count).
 *
 * <p>While the allowance is not used up, data goes at once; the pacer needs the engine's timer
 * only after a hold, and then not per packet: the wake-up it asks for ({@link #hold}) comes when
 * half of the allowance has drained, so that each wake-up sends a batch.
 *
 * <p>A wake-up may come late (a busy machine runs the event loop late). The link, as modelled,
 * then ran dry while data was held back, and starting the estimate again from "now" would lose
 * that time for good, wake-up after wake-up. Instead the pacer gives credit for it: after a hold,
 * the estimate may lag behind the clock by up to {@code pacerLateCreditNanos}, so the sender may
 * hand the link the bytes it could have carried meanwhile (token-bucket style: credit accrues
 * with the time elapsed, up to a cap). The NIC's real queue then covers the next late wake-up,
 * and the link keeps busy. An engine that simply had nothing to send gets no credit
 * ({@link #idle}).
 */
final class Pacer {
    /** Picoseconds one byte takes on a 1 Mbit/s link: 8 bits of 1 us (10^6 ps) each. */
    private static final long PICOS_PER_BYTE_AT_ONE_MBPS = 8_000_000L;
    private final boolean enabled;
    private final long maxQueueNanos;
    private final long picosPerByte;
    private final int throttleMinBytes;
    /** How far behind the clock the estimate may restart after a hold: the most late time made up. */
    private final long lateCreditNanos;
    /** What the link carries beyond a Homa datagram: IP and UDP headers, Ethernet framing. */
    private final int datagramOverhead;
    /** Estimated time at which the link finishes what it has been given (valid once {@link #used}). */
    private long idleAt;
    /** Whether anything was transmitted yet (clock values may be negative: no sentinel time). */
    private boolean used;
    /** Whether data was held back and the link has not caught up since: late time earns credit. */
    private boolean holding;

    Pacer(EngineConfig cfg) {
        this.enabled = cfg.pacerEnabled;
        this.maxQueueNanos = cfg.maxNicQueueNanos;
        this.picosPerByte = Math.max(1, PICOS_PER_BYTE_AT_ONE_MBPS / cfg.linkMbps);
        this.throttleMinBytes = cfg.throttleMinBytes;
        this.lateCreditNanos = cfg.pacerLateCreditNanos;
        this.datagramOverhead = cfg.ipUdpOverhead + WireFormat.ETHERNET_FRAME_OVERHEAD;
    }

    /** Whether a data packet of a message with {@code remaining} unsent bytes may go now. */
    boolean mayTransmit(long now, int remaining) {
        return !enabled || !used || remaining < throttleMinBytes || idleAt - now <= maxQueueNanos;
    }

    /** Records a Homa datagram of {@code length} bytes handed to the link at {@code now}. */
    void sent(long now, int length) {
        transmitted(now, length + datagramOverhead);
    }

    /**
     * Records {@code bytes} handed to the link at {@code now}, as the link counts them. They queue
     * behind the estimate if the link is busy; an idle link starts them now, or, if data was held
     * back meanwhile (a late wake-up), where the link ran dry, at most {@code pacerLateCreditNanos}
     * ago.
     */
    void transmitted(long now, int bytes) {
        long start;
        if (used && idleAt - now > 0) {
            start = idleAt;
        } else if (used && holding) {
            start = idleAt - (now - lateCreditNanos) > 0 ? idleAt : now - lateCreditNanos;
        } else {
            start = now;
        }
        idleAt = start + bytes * picosPerByte / 1000;
        used = true;
        if (idleAt - now >= 0) {
            holding = false; // caught up: the credit for that late wake-up is spent
        }
    }

    /** When a held-back message may go next. */
    long nextSendTime() {
        return idleAt - maxQueueNanos;
    }

    /**
     * Data was held back: returns when the engine should wake up to send again, once half of the
     * allowance has drained (never before {@link #nextSendTime()}), so that a wake-up sends a batch
     * rather than one packet.
     */
    long hold() {
        holding = true;
        return idleAt - maxQueueNanos / 2;
    }

    /** Nothing is waiting to be sent: no credit for the time until something is. */
    void idle() {
        holding = false;
    }
}
