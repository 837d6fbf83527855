package io.homa.core;

import java.nio.ByteBuffer;

/**
 * A message being received: reassembly into lazily allocated chunks (from the engine's
 * {@link PayloadMemory}; a message that arrives whole in one datagram keeps that datagram instead
 * of a chunk, without a copy), the ranges that arrived, and
 * the receiver's grant state. Memory grows only with bytes that actually arrive, and the engine
 * accepts bytes only below what it granted (or the unscheduled limit), so a peer that claims a
 * huge length costs nothing until it is granted. Even the table of chunk references grows only as
 * far as bytes have arrived, never to the claimed length at once. A response whose caller asked
 * for one array ({@link OutgoingPayload#responseAsArray()}), of up to
 * {@link OutgoingPayload#MAX_RESPONSE_ARRAY} bytes, moves into one heap array of its whole length
 * once an eighth of it has arrived (at once if it fits one chunk): its memory is then at most 8
 * times what arrived, fewer than a 64 KiB chunk per 1.4 KB segment can be ({@link #arrayAt}).
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

    Rpc rpc;
    int length;
    /** Order of arrival, for FIFO grants and SRPT ties. */
    long seq;
    final ReceivedRanges ranges = new ReceivedRanges();
    /**
     * Bytes per chunk: {@link #CHUNK}, or the whole length once a response wanted as an array
     * has moved into it ({@link #moveToArray}).
     */
    private int chunkSize;
    /**
     * Received bytes from which a response wanted as one array ({@link OutgoingPayload#responseAsArray()})
     * is assembled in that array ({@link #arrayAt}); {@link Integer#MAX_VALUE} for every other message.
     */
    private int arrayFrom;
    /** Whether its only chunk is that heap array of its whole length (see {@link #arrayFrom}). */
    private boolean inArray;
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
        this.arrayFrom = arrayAt(rpc, length);
        this.inArray = arrayFrom == 0; // a short one: its one chunk is the array from the start
        this.chunkSize = CHUNK;
        this.chunkCount = chunkCount(length);
        // An empty message has one (empty) chunk slot, as its footprint has always counted.
        single[0] = null;
        this.chunks = length == 0 ? single : NO_CHUNKS;
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

    /**
     * From how many received bytes on a message of {@code length} for {@code rpc} (null: a new
     * server RPC) is assembled in one heap array of its length: a response whose caller wants one
     * array ({@link OutgoingPayload#responseAsArray()}) of at most
     * {@link OutgoingPayload#MAX_RESPONSE_ARRAY} bytes, from the start if it fits one chunk, else
     * once an eighth of it has arrived (so the array is never more than 8 times the bytes received,
     * and what arrived before is copied once more: an eighth at most). Never
     * ({@link Integer#MAX_VALUE}) for any other message.
     */
    static int arrayAt(Rpc rpc, int length) {
        if (rpc == null || !rpc.client || !rpc.responseAsArray || length > OutgoingPayload.MAX_RESPONSE_ARRAY) {
            return Integer.MAX_VALUE;
        }
        return length <= CHUNK ? 0 : length / ARRAY_FRACTION;
    }

    /** See {@link #arrayAt}: a response wanted as an array moves into it once 1/this of it arrived. */
    static final int ARRAY_FRACTION = 8;

    /**
     * Whether writing {@code [offset, offset + n)} moves the message into its array
     * ({@link #moveToArray}): the bytes it adds (not those that arrived already) reach
     * {@link #arrayFrom}.
     */
    private boolean movesToArray(int offset, int n) {
        return !inArray && n > 0 && received() + n >= arrayFrom
                && received() + ranges.missing(offset, offset + n) >= arrayFrom;
    }

    /** Memory charged for this message: chunk bytes plus bookkeeping. */
    long footprint() {
        return allocated + BOOKKEEPING + (long) SLOT * chunks.length + (long) SLOT * ranges.capacity();
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
        if (ranges.refuses(offset, offset + n)) {
            return 0; // refused: write() allocates nothing for it
        }
        if (movesToArray(offset, n)) { // the whole array (its chunks then go: a table of one, charged as it was)
            return length - allocated + (long) SLOT * Math.max(0, 1 - chunks.length)
                    + (long) SLOT * ranges.capacityGrowthBound();
        }
        int last = (offset + n - 1) / chunkSize;
        long table = (long) SLOT * (tableLength(chunkCount, chunks.length, last) - chunks.length);
        return allocationFor(offset, n) + table + (long) SLOT * ranges.capacityGrowthBound();
    }

    /** The footprint a new message of {@code length} has once its first segment is written. */
    static long footprintOfNew(int length, int offset, int n) {
        int table = length == 0 ? 1 : n <= 0 ? 0 : tableLength(chunkCount(length), 0, (offset + n - 1) / CHUNK);
        return BOOKKEEPING + (long) SLOT * table + (long) SLOT * INITIAL_RANGES + chunkBytes(length, offset, n);
    }

    /**
     * {@link #footprintOfNew(int, int, int)} for a message of {@code rpc} (null: a new server RPC),
     * which may start in its array ({@link #arrayAt}).
     */
    static long footprintOfNew(Rpc rpc, int length, int offset, int n) {
        if (n > 0 && n >= arrayAt(rpc, length)) {
            return BOOKKEEPING + SLOT + (long) SLOT * INITIAL_RANGES + length;
        }
        return footprintOfNew(length, offset, n);
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
        for (int c = offset / chunkSize; c <= (offset + n - 1) / chunkSize; c++) {
            if (c >= chunks.length || chunks[c] == null) {
                need += chunkLength(c);
            }
        }
        return need;
    }

    private int chunkLength(int c) {
        return chunkLength(length, c, chunkSize);
    }

    private static int chunkLength(int length, int c, int chunkSize) {
        return (int) Math.min(chunkSize, (long) length - (long) c * chunkSize);
    }

    /** Chunk bytes a segment would allocate in a new message of {@code length} (nothing allocated yet). */
    static long chunkBytes(int length, int offset, int n) {
        if (n <= 0) {
            return 0;
        }
        long need = 0;
        for (int c = offset / CHUNK; c <= (offset + n - 1) / CHUNK; c++) {
            need += chunkLength(length, c, CHUNK);
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
        if (offset == 0 && n == length && chunkCount == 1 && chunks.length == 0) {
            // The whole message in one datagram: no copy (the only segment, so ranges accept it).
            single[0] = memory.keep(src, srcIndex, n);
            chunks = single;
            allocated += n;
            return ranges.add(0, n);
        }
        if (n <= 0 || ranges.refuses(offset, offset + n)) {
            return ranges.add(offset, offset + n); // empty (0), or refused as too fragmented (-1): no memory
        }
        // A duplicate needs nothing below: its chunks exist, and it adds no bytes towards the array.
        // Memory before the range: should an allocation fail, no range may be marked received
        // with its bytes unwritten (nothing would ask for them again).
        if (movesToArray(offset, n)) {
            moveToArray();
        }
        int first = offset / chunkSize;
        int last = (offset + n - 1) / chunkSize;
        if (last >= chunks.length) {
            // A table of one never grows (chunkCount 1): the kept array; else a new one.
            chunks = chunkCount == 1 ? single
                    : java.util.Arrays.copyOf(chunks, tableLength(chunkCount, chunks.length, last));
        }
        for (int c = first; c <= last; c++) {
            if (chunks[c] == null) {
                int size = chunkLength(c);
                // A response wanted as an array, short enough to be one from the start: on the
                // heap (the shell's memory is for bytes it sends or hands over as buffers).
                chunks[c] = inArray ? PayloadMemory.HEAP.allocate(size) : memory.allocate(size);
                allocated += size;
            }
        }
        int added = ranges.add(offset, offset + n);
        if (added <= 0) {
            return added;
        }
        int pos = offset;
        int from = srcIndex;
        int left = n;
        while (left > 0) {
            int c = pos / chunkSize;
            int within = pos - c * chunkSize;
            int k = Math.min(left, chunkLength(c) - within);
            chunks[c].bytes().put(within, src, from, k);
            pos += k;
            from += k;
            left -= k;
        }
        return added;
    }

    /**
     * A response wanted as an array has reached {@link #arrayFrom}: the chunks it has so far are
     * copied into one heap array of its whole length (bytes not yet received too: they are
     * overwritten when they arrive) and given back, and that array is its only chunk from now on.
     */
    private void moveToArray() {
        PayloadBuffer array = PayloadMemory.HEAP.allocate(length); // first: if it fails, nothing changed
        ByteBuffer to = array.bytes();
        for (int c = 0; c < chunks.length; c++) {
            PayloadBuffer chunk = chunks[c];
            if (chunk != null) {
                to.put(c * CHUNK, chunk.bytes(), 0, chunkLength(c));
                chunks[c] = null;
                chunk.free();
            }
        }
        single[0] = array;
        chunks = single;
        chunkSize = length;
        chunkCount = 1;
        allocated = length;
        inArray = true;
    }

    /** The complete message; its chunks now belong to it (this object no longer refers to them). */
    ReceivedMessage toMessage() {
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
