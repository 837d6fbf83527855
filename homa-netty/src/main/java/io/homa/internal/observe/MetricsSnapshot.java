package io.homa.internal.observe;

import io.homa.core.Counter;
import io.homa.core.wire.DropReason;

/**
 * A socket's counters summed over its event loops, as the shell collects them for the API's
 * {@code HomaMetrics}: the engines' counters and drops by their enums' ordinals, the shell's by
 * {@link ShellCounter} ordinal, the live RPCs and the gauges. Filled under one lock by the loops,
 * then handed over and never changed. Internal use only.
 */
public final class MetricsSnapshot {
    /** Indexes into {@link #gauges}. */
    public static final int BUFFERED = 0, OUTGOING = 1, INCOMING = 2, PEERS = 3, GAUGES = 4;

    public final long[] counters = new long[Counter.values().length];
    public final long[] drops = new long[DropReason.values().length];
    public final long[] shell = new long[ShellCounter.values().length];
    public final long[] gauges = new long[GAUGES];
    /** Handlers started, by how long their request waited: bucket i is [2^i, 2^(i+1)) µs. */
    public final long[] queueDelays = new long[io.homa.internal.rpc.RequestQueue.DELAY_BUCKETS];
    /** Requests waiting for a handler thread at the time of the snapshot. */
    public int queuedRequests;
    public int activeClientRpcs;
    public int activeServerRpcs;
    /** Requests received by the verified identity of their client (secured sockets; else empty). */
    public java.util.Map<String, Long> requestsByPeerIdentity = java.util.Map.of();
    /** The Netty transport's name: io_uring, epoll or nio. */
    public String transport;
}
