package io.homa.core;

import io.homa.core.wire.DropReason;

/** The counters of one engine and its dropped datagrams by reason, bumped by every mechanism. */
final class EngineCounters {
    private final long[] counters = new long[Counter.all().length];
    private final long[] drops = new long[DropReason.all().length];
    /** Who hears about single events (RESENDs, timeouts...): carried here because every mechanism holds this. */
    EngineObserver observer = EngineObserver.NONE;

    void bump(Counter c) {
        counters[c.ordinal()]++;
    }

    void add(Counter c, long n) {
        counters[c.ordinal()] += n;
    }

    /** A datagram dropped for {@code reason} (also counted in {@link Counter#PACKETS_DROPPED}). */
    void drop(DropReason reason) {
        drops[reason.ordinal()]++;
        counters[Counter.PACKETS_DROPPED.ordinal()]++;
    }

    long get(Counter c) {
        return counters[c.ordinal()];
    }

    long drops(DropReason reason) {
        return drops[reason.ordinal()];
    }
}
