package io.homa.core;

/**
 * The engine's coarse clock: timer ticks run so far, in which liveness, silence, tombstones and
 * owed acks are measured, and when the next tick is due ({@link Long#MAX_VALUE} while nothing
 * needs time, so that an idle engine costs nothing).
 */
final class TickClock {
    private final long tickNanos;
    private long tick;
    private long nextTickAt = Long.MAX_VALUE;

    TickClock(long tickNanos) {
        this.tickNanos = tickNanos;
    }

    /** Ticks run so far. */
    long tick() {
        return tick;
    }

    /** When the next tick is due (ns), or {@link Long#MAX_VALUE}. */
    long nextTickAt() {
        return nextTickAt;
    }

    /** Something now needs time: a tick is due one tick from {@code now}, unless one is due already. */
    void arm(long now) {
        if (nextTickAt == Long.MAX_VALUE) {
            nextTickAt = now + tickNanos;
        }
    }

    /** Runs the clock to {@code now}: if a tick is due, counts it, schedules the next and returns true. */
    boolean advance(long now) {
        if (now < nextTickAt) {
            return false;
        }
        tick++;
        nextTickAt = now + tickNanos;
        return true;
    }

    /** Nothing needs time any more: no tick until {@link #arm}. */
    void disarm() {
        nextTickAt = Long.MAX_VALUE;
    }
}
