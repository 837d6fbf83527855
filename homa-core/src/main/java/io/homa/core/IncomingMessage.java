package io.homa.core;

import java.nio.ByteBuffer;

/**
 * A message being received: reassembly into lazily allocated chunks, the ranges that arrived, and
 * the receiver's grant state. Memory grows only with bytes that actually arrive, and the engine
 * accepts bytes only below what it granted (or the unscheduled limit), so a peer that claims a
 * huge length costs nothing until it is granted.
 */
final class IncomingMessage {
    static final int CHUNK = 64 * 1024;

    final Rpc rpc;
    final int length;
    /** Order of arrival, for FIFO grants and SRPT ties. */
    final long seq;
    final ReceivedRanges ranges = new ReceivedRanges();
    private final byte[][] chunks;
    /** Bytes of chunk memory allocated. */
    long allocated;

    /** The sender may send every byte below this without another grant. */
    int granted;
    /** Priority last granted for scheduled bytes. */
    int grantPriority;
    /** Whether this message is in the grant scheduler's set. */
    boolean grantable;

    IncomingMessage(Rpc rpc, int length, long seq) {
        this.rpc = rpc;
        this.length = length;
        this.seq = seq;
        this.chunks = new byte[length == 0 ? 1 : (int) (((long) length + CHUNK - 1) / CHUNK)][];
        if (length == 0) {
            chunks[0] = new byte[0];
        }
    }

    long received() {
        return ranges.total();
    }

    boolean complete() {
        return ranges.total() == length;
    }

    /** Bytes still to arrive: the SRPT rank key. */
    long remaining() {
        return length - ranges.total();
    }

    /** Bytes granted but not yet received (what counts against the incoming budget). */
    long outstanding() {
        return Math.max(0, granted - ranges.total());
    }

    /** Chunk bytes a segment at {@code [offset, offset+n)} would newly allocate. */
    long allocationFor(int offset, int n) {
        if (n <= 0) {
            return 0; // an empty segment touches no chunk
        }
        long need = 0;
        for (int c = offset / CHUNK; c <= (offset + n - 1) / CHUNK; c++) {
            if (chunks[c] == null) {
                need += chunkLength(c);
            }
        }
        return need;
    }

    private int chunkLength(int c) {
        return chunkLength(length, c);
    }

    private static int chunkLength(int length, int c) {
        return (int) Math.min(CHUNK, (long) length - (long) c * CHUNK);
    }

    /** Chunk bytes a segment would allocate in a new message of {@code length} (nothing allocated yet). */
    static long chunkBytes(int length, int offset, int n) {
        if (n <= 0) {
            return 0;
        }
        long need = 0;
        for (int c = offset / CHUNK; c <= (offset + n - 1) / CHUNK; c++) {
            need += chunkLength(length, c);
        }
        return need;
    }

    /**
     * Copies a segment in. The caller has checked bounds and memory.
     *
     * @return new bytes, or -1 if the segment was refused (too fragmented)
     */
    int write(int offset, ByteBuffer src, int srcIndex, int n) {
        int added = ranges.add(offset, offset + n);
        if (added <= 0) {
            return added;
        }
        int pos = offset;
        int from = srcIndex;
        int left = n;
        while (left > 0) {
            int c = pos / CHUNK;
            if (chunks[c] == null) {
                chunks[c] = new byte[chunkLength(c)];
                allocated += chunks[c].length;
            }
            int within = pos - c * CHUNK;
            int k = Math.min(left, chunks[c].length - within);
            src.get(from, chunks[c], within, k);
            pos += k;
            from += k;
            left -= k;
        }
        return added;
    }

    ReceivedMessage toMessage() {
        return new ReceivedMessage(length, chunks, CHUNK);
    }
}
