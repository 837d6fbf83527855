package io.homa.core;

import java.nio.ByteBuffer;

/**
 * Where the engine gets memory for the payload it receives, given by the I/O shell (see
 * {@link HomaEngine#setPayloadMemory}); {@link #HEAP} by default. A message that arrives whole in
 * one datagram is {@link #keep kept} (a shell that owns the datagram's buffer retains a slice of
 * it, so the bytes are never copied); a longer one is assembled, with one copy, in chunks from
 * {@link #allocate}, allocated only as bytes arrive so that a peer claiming a huge length costs
 * nothing until it is granted, or, where the shell offers it ({@link #keepSegment}), kept segment
 * by segment without a copy. Called on the engine's thread, from inside an engine call.
 */
public interface PayloadMemory {
    /** Heap memory: kept datagrams are copied (the caller may reuse its buffer), chunks are arrays. */
    PayloadMemory HEAP = new HeapPayloadMemory();

    /**
     * Keeps bytes {@code [index, index + length)} (absolute indices) of the datagram being passed to
     * {@link HomaEngine#onDatagram} right now, beyond that call.
     */
    PayloadBuffer keep(ByteBuffer datagram, int index, int length);

    /** New writable memory of exactly {@code length} bytes (a reassembly chunk, or a segment's copy). */
    PayloadBuffer allocate(int length);

    /**
     * Keeps bytes {@code [index, index + length)} of the datagram being passed to
     * {@link HomaEngine#onDatagram} right now, one segment of a longer message, as {@link #keep}
     * does for a whole one; or null when this memory would rather have them copied (the default:
     * the engine then assembles the message in chunks). A message whose first segment was kept is
     * delivered as its segments, in order, one part each (those this memory refused copied into
     * memory of their own), so a shell keeps segments only where holding their datagrams costs
     * less than copying them.
     */
    default PayloadBuffer keepSegment(ByteBuffer datagram, int index, int length) {
        return null;
    }
}
