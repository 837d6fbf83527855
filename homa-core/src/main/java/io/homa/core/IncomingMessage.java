package io.homa.core;

import java.nio.ByteBuffer;

/**
 * A message being received: reassembly into lazily allocated chunks (from the engine's
 * {@link PayloadMemory}; a message that arrives whole in one datagram keeps that datagram instead
 * of a chunk, without a copy), or, where the memory keeps its first segment
 * ({@link PayloadMemory#keepSegment}), a table of its segments kept in their datagrams (one part
 * each, the ones the memory refused copied into parts of their own); the ranges that arrived, and
 * the receiver's grant state. Memory grows only with bytes that actually arrive, and the engine
 * accepts bytes only below what it granted (or the unscheduled limit), so a peer that claims a
 * huge length costs nothing until it is granted. Even the table of chunk references grows only as
 * far as bytes have arrived, never to the claimed length at once.
 *
 * <p>{@link #footprint()} is what the engine charges against its buffer limits: the chunk bytes
 * plus an estimate of the bookkeeping (objects, the chunk table, the received ranges).
 */
final class IncomingMessage {
    static final int CHUNK = 64 * 1024;
    /**
     * Bytes charged for each incoming message besides its tables: an estimate of the object headers
     * and fields of its RPC, this message, its ranges and their map entries, rounded up.
     */
    static final int BOOKKEEPING = 256;
    /** Bytes charged per chunk reference and per received-range slot (two ints). */
    static final int SLOT = 8;
    /** Initial capacity of {@link ReceivedRanges}. */
    static final int INITIAL_RANGES = 4;
    private static final PayloadBuffer[] NO_CHUNKS = {};
    /**
     * Bytes charged per slot of a segment table beyond {@link #SLOT}: an estimate of a part's
     * objects (the shell's part; for a piece the memory refused, a pooled buffer of its own and
     * its smallest allocation), rounded up, so that a peer sending tiny pieces pays for them.
     */
    static final int PART = 128;
    /** Initial room of a segment table (one: a new message's charge barely changes; it doubles). */
    static final int INITIAL_PARTS = 1;
    /** How the message's bytes are held: not decided until its first segment that is not the whole message. */
    private static final byte UNDECIDED = 0;
    private static final byte CHUNKED = 1;
    private static final byte SEGMENTS = 2;

    private byte mode;
    /**
     * The parts of a message kept as its segments ({@link #SEGMENTS}), in order of arrival (sorted
     * by offset when delivered), and where each starts in the message; owned here.
     */
    private PayloadBuffer[] parts;
    private int[] partAt;
    private int partCount;
    /** Room for the missing pieces of a segment that overlaps what arrived ({@link ReceivedRanges#missing}). */
    private int[] missing;

    Rpc rpc;
    int length;
    /** Order of arrival, for FIFO grants and SRPT ties. */
    long seq;
    final ReceivedRanges ranges = new ReceivedRanges();
    /** Chunks the whole message needs. */
    private int chunkCount;
    /** Chunk references, grown (up to {@link #chunkCount}) as far as bytes have arrived; owned here. */
    private PayloadBuffer[] chunks;
    /**
     * The table of a message of one chunk (or none), which the object keeps when reused: such a
     * message, every short one, costs no array ({@link #toMessage} hands over the chunk alone).
     */
    private final PayloadBuffer[] single = new PayloadBuffer[1];
    /** Bytes of chunk memory allocated. */
    long allocated;

    /** The sender may send every byte below this without another grant. */
    int granted;
    /** Priority last granted for scheduled bytes. */
    int grantPriority;
    /** Whether this message is in the grant scheduler's set. */
    boolean grantable;
    /** Whether the scheduler has granted this message yet (its first grant is never held for a batch). */
    boolean grantedOnce;

    IncomingMessage(Rpc rpc, int length, long seq) {
        init(rpc, length, seq);
    }

    /**
     * Makes this object a new message, every field as the constructor leaves it: the engine reuses
     * the object of a message it delivered or discarded (see {@link RpcTable#newIncoming}).
     */
    IncomingMessage init(Rpc rpc, int length, long seq) {
        this.rpc = rpc;
        this.length = length;
        this.seq = seq;
        this.chunkCount = chunkCount(length);
        // An empty message has one (empty) chunk slot, as its footprint has always counted.
        single[0] = null;
        this.chunks = length == 0 ? single : NO_CHUNKS;
        mode = UNDECIDED;
        parts = null;
        partAt = null;
        partCount = 0;
        ranges.clear();
        allocated = 0;
        granted = 0;
        grantPriority = 0;
        grantable = false;
        grantedOnce = false;
        return this;
    }

    private static int chunkCount(int length) {
        return length == 0 ? 1 : (int) (((long) length + CHUNK - 1) / CHUNK);
    }

    /** Memory charged for this message: chunk bytes plus bookkeeping. */
    long footprint() {
        return allocated + BOOKKEEPING + (long) SLOT * chunks.length + (long) SLOT * ranges.capacity()
                + (parts == null ? 0 : (long) (SLOT + PART) * parts.length);
    }

    /** The length of a segment table that must hold {@code needed} parts, growing from {@code current}. */
    private static int partsLength(int current, int needed) {
        return needed <= current ? current : Math.max(needed, 2 * current);
    }

    /** At most how much a segment of {@code n} bytes grows the footprint of a message kept as segments. */
    private long segmentsGrowthFor(int n) {
        int current = parts == null ? 0 : parts.length;
        // A segment adds at most one part per gap it fills: intervals + 1.
        int table = partsLength(current, partCount + ranges.intervals() + 1) - current;
        return n + (long) (SLOT + PART) * table + (long) SLOT * ranges.capacityGrowthBound();
    }

    /** Length of the chunk table needed to hold chunk {@code last}, growing from {@code current}. */
    private static int tableLength(int chunkCount, int current, int last) {
        if (last < current) {
            return current;
        }
        return Math.min(chunkCount, Math.max(last + 1, 2 * current));
    }

    /**
     * At most how much {@link #footprint()} grows when the segment {@code [offset, offset+n)} is
     * written (chunks, table and ranges); the engine checks it against its limits first.
     */
    long footprintGrowthFor(int offset, int n) {
        if (n <= 0) {
            return 0;
        }
        if (mode == SEGMENTS) {
            return segmentsGrowthFor(n);
        }
        int last = (offset + n - 1) / CHUNK;
        long table = (long) SLOT * (tableLength(chunkCount, chunks.length, last) - chunks.length);
        long chunked = allocationFor(offset, n) + table + (long) SLOT * ranges.capacityGrowthBound();
        return mode == CHUNKED ? chunked : Math.max(chunked, segmentsGrowthFor(n));
    }

    /** The footprint a new message of {@code length} has once its first segment is written. */
    static long footprintOfNew(int length, int offset, int n) {
        int table = length == 0 ? 1 : n <= 0 ? 0 : tableLength(chunkCount(length), 0, (offset + n - 1) / CHUNK);
        return BOOKKEEPING + (long) SLOT * table + (long) SLOT * INITIAL_RANGES + chunkBytes(length, offset, n);
    }

    /**
     * The footprint of a new message once its first segment, {@code n} bytes, is written if the
     * memory keeps that segment ({@link PayloadMemory#keepSegment}); the engine checks the larger
     * of this and {@link #footprintOfNew}, as it cannot know beforehand.
     */
    static long footprintOfNewSegments(int n) {
        return BOOKKEEPING + (long) (SLOT + PART) * INITIAL_PARTS + (long) SLOT * INITIAL_RANGES + Math.max(n, 0);
    }

    /** Scheduled bytes (beyond the first {@code unscheduledLimit}) granted and not yet received. */
    long scheduledOutstanding(int unscheduledLimit) {
        return Math.max(0, granted - Math.max(received(), Math.min(length, unscheduledLimit)));
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
            if (c >= chunks.length || chunks[c] == null) {
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

    /** Writes a segment in, with chunks from the heap (tests). */
    int write(int offset, ByteBuffer src, int srcIndex, int n) {
        return write(offset, src, srcIndex, n, PayloadMemory.HEAP);
    }

    /**
     * Writes a segment in: keeps it if it is the whole message, else copies it into chunks from
     * {@code memory}. The caller has checked bounds and memory.
     *
     * @return new bytes, or -1 if the segment was refused (too fragmented)
     */
    int write(int offset, ByteBuffer src, int srcIndex, int n, PayloadMemory memory) {
        if (offset == 0 && n == length && chunkCount == 1 && chunks.length == 0 && mode == UNDECIDED) {
            // The whole message in one datagram: no copy (the only segment, so ranges accept it).
            single[0] = memory.keep(src, srcIndex, n);
            chunks = single;
            mode = CHUNKED; // a retransmitted piece of it is a duplicate in its one chunk
            allocated += n;
            return ranges.add(0, n);
        }
        if (mode == UNDECIDED && n > 0) {
            // The first segment decides: kept in its datagram, or the message goes into chunks.
            PayloadBuffer first = memory.keepSegment(src, srcIndex, n);
            if (first == null) {
                mode = CHUNKED;
            } else {
                mode = SEGMENTS;
                int added = ranges.add(offset, offset + n); // the first: never refused
                ensureParts(1);
                addPart(offset, first, n);
                return added;
            }
        }
        if (mode == SEGMENTS) {
            return writeSegments(offset, src, srcIndex, n, memory);
        }
        int added = ranges.add(offset, offset + n);
        if (added <= 0) {
            return added;
        }
        int last = (offset + n - 1) / CHUNK;
        if (last >= chunks.length) {
            // A table of one never grows (chunkCount 1): the kept array; else a new one.
            chunks = chunkCount == 1 ? single
                    : java.util.Arrays.copyOf(chunks, tableLength(chunkCount, chunks.length, last));
        }
        int pos = offset;
        int from = srcIndex;
        int left = n;
        while (left > 0) {
            int c = pos / CHUNK;
            int size = chunkLength(c);
            if (chunks[c] == null) {
                chunks[c] = memory.allocate(size);
                allocated += size;
            }
            int within = pos - c * CHUNK;
            int k = Math.min(left, size - within);
            chunks[c].bytes().put(within, src, from, k);
            pos += k;
            from += k;
            left -= k;
        }
        return added;
    }

    /**
     * A segment of a message kept as segments: each piece of it that had not arrived becomes a
     * part, kept in the datagram where the memory agrees, else copied into memory of its own.
     */
    private int writeSegments(int offset, ByteBuffer src, int srcIndex, int n, PayloadMemory memory) {
        int room = 2 * (ranges.intervals() + 1);
        if (missing == null || missing.length < room) {
            missing = new int[Math.max(room, 8)];
        }
        int pieces = ranges.missing(offset, offset + n, missing);
        if (pieces == 0) {
            return 0; // a duplicate
        }
        int added = ranges.add(offset, offset + n);
        if (added <= 0) {
            return added; // refused (too fragmented): nothing kept
        }
        ensureParts(partCount + pieces); // once: the bound the engine checked assumes one growth
        for (int i = 0; i < pieces; i++) {
            int start = missing[2 * i];
            int len = missing[2 * i + 1] - start;
            int at = srcIndex + (start - offset);
            PayloadBuffer part = memory.keepSegment(src, at, len);
            if (part == null) {
                part = memory.allocate(len);
                part.bytes().put(0, src, at, len);
            }
            addPart(start, part, len);
        }
        return added;
    }

    /** Room in the segment table for {@code needed} parts. */
    private void ensureParts(int needed) {
        int current = parts == null ? 0 : parts.length;
        int cap = partsLength(current, needed);
        if (cap > current) {
            parts = parts == null ? new PayloadBuffer[cap] : java.util.Arrays.copyOf(parts, cap);
            partAt = partAt == null ? new int[cap] : java.util.Arrays.copyOf(partAt, cap);
        }
    }

    /** Appends a part (arrival order; {@link #sortParts} orders them at delivery); room was ensured. */
    private void addPart(int at, PayloadBuffer part, int len) {
        parts[partCount] = part;
        partAt[partCount] = at;
        partCount++;
        allocated += len;
    }

    /** Orders the parts by offset (they arrive in order but for retransmissions: then one sort). */
    private void sortParts() {
        boolean sorted = true;
        for (int i = 1; i < partCount && sorted; i++) {
            sorted = partAt[i - 1] < partAt[i];
        }
        if (sorted) {
            return;
        }
        long[] keys = new long[partCount];
        for (int i = 0; i < partCount; i++) {
            keys[i] = ((long) partAt[i] << 32) | i;
        }
        java.util.Arrays.sort(keys);
        PayloadBuffer[] ordered = new PayloadBuffer[parts.length];
        for (int i = 0; i < partCount; i++) {
            int from = (int) keys[i];
            ordered[i] = parts[from];
            partAt[i] = (int) (keys[i] >>> 32);
        }
        parts = ordered;
    }

    /** The complete message; its chunks now belong to it (this object no longer refers to them). */
    ReceivedMessage toMessage() {
        if (mode == SEGMENTS) {
            sortParts();
            PayloadBuffer[] own = partCount == parts.length ? parts : java.util.Arrays.copyOf(parts, partCount);
            ReceivedMessage m = partCount == 1 && own[0] instanceof ReceivedMessage whole && whole.length() == length
                    ? whole : ReceivedMessage.assembled(length, own);
            parts = null;
            partAt = null;
            partCount = 0;
            return m;
        }
        // Complete: every chunk was written, so the table has reached its full length.
        // A message takes one part out of its array and keeps none for an empty one, so the kept
        // one-slot table is never handed over.
        // A part that is a message of its own and holds all of this one is delivered as it is.
        ReceivedMessage m = length > 0 && chunks.length == 1 && chunks[0] instanceof ReceivedMessage own
                && own.length() == length ? own : ReceivedMessage.assembled(length, chunks);
        single[0] = null;
        chunks = NO_CHUNKS; // the message's now
        return m;
    }

    /** Releases the chunks of a message that will not be delivered (aborted, evicted, timed out). */
    void discard() {
        for (int i = 0; i < partCount; i++) {
            parts[i].free();
            parts[i] = null;
        }
        partCount = 0;
        for (int i = 0; i < chunks.length; i++) {
            if (chunks[i] != null) {
                chunks[i].free();
                chunks[i] = null;
            }
        }
    }

    /** Length of the chunk reference table now (it grows as bytes arrive). */
    int chunkTableLength() {
        return chunks.length;
    }
}
