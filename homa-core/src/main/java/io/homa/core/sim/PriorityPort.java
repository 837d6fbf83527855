package io.homa.core.sim;

import java.util.ArrayDeque;

/**
 * A switch egress port (a host's downlink): 8 strict-priority FIFO queues sharing a bounded
 * buffer, drained at the link rate. With {@code strict == false} it is a single FIFO, to show
 * what priorities buy.
 */
final class PriorityPort {
    private final ArrayDeque<SimPacket>[] queues;
    private final boolean strict;
    private final long bufferBytes;
    long queuedBytes;
    long maxQueuedBytes;
    long overflowDrops;
    boolean busy;

    @SuppressWarnings("unchecked")
    PriorityPort(boolean strict, long bufferBytes) {
        this.strict = strict;
        this.bufferBytes = bufferBytes;
        this.queues = new ArrayDeque[8];
        for (int i = 0; i < 8; i++) {
            queues[i] = new ArrayDeque<>();
        }
    }

    /** Queues a packet; false if the buffer is full (tail drop). */
    boolean offer(SimPacket p) {
        if (queuedBytes + p.wireBytes > bufferBytes) {
            overflowDrops++;
            return false;
        }
        queues[strict ? p.priority : 0].add(p);
        queuedBytes += p.wireBytes;
        maxQueuedBytes = Math.max(maxQueuedBytes, queuedBytes);
        return true;
    }

    /** The next packet to serialize: the head of the highest non-empty level. */
    SimPacket poll() {
        for (int level = 7; level >= 0; level--) {
            SimPacket p = queues[level].poll();
            if (p != null) {
                queuedBytes -= p.wireBytes;
                return p;
            }
        }
        return null;
    }
}
