package io.homa.core;

/**
 * Keeps the transmit backlog short, as Linux Homa's pacer does: it estimates when the link will
 * have sent everything handed to it so far, and holds long messages back while that estimate is
 * more than {@code maxNicQueueNanos} ahead, so that a new short message never waits behind a long
 * queue. Short messages and control packets are never held back (but still count).
 */
final class Pacer {
    private final boolean enabled;
    private final long maxQueueNanos;
    private final long picosPerByte;
    private final int throttleMinBytes;
    /** Estimated time at which the link finishes what it has been given (valid once {@link #used}). */
    private long idleAt;
    /** Whether anything was transmitted yet (clock values may be negative: no sentinel time). */
    private boolean used;

    Pacer(EngineConfig cfg) {
        this.enabled = cfg.pacerEnabled && !cfg.fifoSchedulingForTests;
        this.maxQueueNanos = cfg.maxNicQueueNanos;
        this.picosPerByte = Math.max(1, 8_000_000L / cfg.linkMbps);
        this.throttleMinBytes = cfg.throttleMinBytes;
    }

    /** Whether a data packet of a message with {@code remaining} unsent bytes may go now. */
    boolean mayTransmit(long now, int remaining) {
        return !enabled || !used || remaining < throttleMinBytes || idleAt - now <= maxQueueNanos;
    }

    /** Records {@code bytes} handed to the link at {@code now}. */
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
