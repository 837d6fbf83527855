package io.homa.core.sim;

/**
 * One output port of the simulated datacenter (a host's NIC or a switch port): strict priority
 * FIFO queues (one per level; a single FIFO when the topology has one level) of packet ids,
 * sharing a buffer of {@code bufferBytes}, drained at the link rate onto a link with a fixed
 * latency to the next node. The queues are int rings, so queueing allocates nothing.
 */
final class EgressPort {
    final long bitsPerSecond;
    final long latencyNanos;
    /** Node the link leads to (see {@link Datacenter} for the numbering). */
    final int nextNode;
    private final long bufferBytes;
    private final int[][] rings;
    private final int[] head;
    private final int[] count;
    private int total;
    long queuedBytes;
    long maxQueuedBytes;
    long drops;
    long bytesSent;
    /** When the packet on the wire has been serialized. */
    long busyUntil;
    /** Whether a PORT_FREE event is scheduled. */
    boolean drainScheduled;

    EgressPort(int levels, long bitsPerSecond, long latencyNanos, int nextNode, long bufferBytes) {
        this.bitsPerSecond = bitsPerSecond;
        this.latencyNanos = latencyNanos;
        this.nextNode = nextNode;
        this.bufferBytes = bufferBytes;
        this.rings = new int[levels][16];
        this.head = new int[levels];
        this.count = new int[levels];
    }

    /** Serialization time of {@code wireBytes} on this port's link, ns (rounded up). */
    long serializationNanos(int wireBytes) {
        return (wireBytes * 8_000_000_000L + bitsPerSecond - 1) / bitsPerSecond;
    }

    boolean isEmpty() {
        return total == 0;
    }

    /** Queues a packet at {@code priority} (0..7); false if the buffer is full (tail drop). */
    boolean offer(int packet, int priority, int wireBytes) {
        if (queuedBytes + wireBytes > bufferBytes) {
            drops++;
            return false;
        }
        int level = rings.length == 1 ? 0 : Math.min(priority, rings.length - 1);
        int[] ring = rings[level];
        if (count[level] == ring.length) {
            int[] bigger = new int[ring.length * 2];
            for (int i = 0; i < count[level]; i++) {
                bigger[i] = ring[(head[level] + i) & (ring.length - 1)];
            }
            rings[level] = ring = bigger;
            head[level] = 0;
        }
        ring[(head[level] + count[level]) & (ring.length - 1)] = packet;
        count[level]++;
        total++;
        queuedBytes += wireBytes;
        if (queuedBytes > maxQueuedBytes) {
            maxQueuedBytes = queuedBytes;
        }
        return true;
    }

    /** The next packet to send (head of the highest non-empty level), or -1; the caller debits its bytes. */
    int poll() {
        for (int level = rings.length - 1; level >= 0; level--) {
            if (count[level] != 0) {
                int[] ring = rings[level];
                int p = ring[head[level]];
                head[level] = (head[level] + 1) & (ring.length - 1);
                count[level]--;
                total--;
                return p;
            }
        }
        return -1;
    }
}
