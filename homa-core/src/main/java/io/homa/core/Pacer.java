package io.homa.core;

import io.homa.core.wire.WireFormat;

/**
 * Keeps the transmit backlog short, as Linux Homa's pacer does: it estimates when the link will
 * have sent everything handed to it so far, and holds long messages back while that estimate is
 * more than {@code maxNicQueueNanos} ahead, so that a new short message never waits behind a long
 * queue. Short messages and control packets are never held back (but still count).
 */
final class Pacer {
    /** Picoseconds one byte takes on a 1 Mbit/s link: 8 bits of 1 us (10^6 ps) each. */
    private static final long PICOS_PER_BYTE_AT_ONE_MBPS = 8_000_000L;
    private final boolean enabled;
    private final long maxQueueNanos;
    private final long picosPerByte;
    private final int throttleMinBytes;
    /** What the link carries beyond a Homa datagram: IP and UDP headers, Ethernet framing. */
    private final int datagramOverhead;
    /** Estimated time at which the link finishes what it has been given (valid once {@link #used}). */
    private long idleAt;
    /** Whether anything was transmitted yet (clock values may be negative: no sentinel time). */
    private boolean used;

    Pacer(EngineConfig cfg) {
        this.enabled = cfg.pacerEnabled;
        this.maxQueueNanos = cfg.maxNicQueueNanos;
        this.picosPerByte = Math.max(1, PICOS_PER_BYTE_AT_ONE_MBPS / cfg.linkMbps);
        this.throttleMinBytes = cfg.throttleMinBytes;
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

    /** Records {@code bytes} handed to the link at {@code now}, as the link counts them. */
    void transmitted(long now, int bytes) {
        long start = used && idleAt - now > 0 ? idleAt : now;
        idleAt = start + bytes * picosPerByte / 1000;
        used = true;
    }

    /** When a held-back message may go next. */
    long nextSendTime() {
        return idleAt - maxQueueNanos;
    }
}
