package io.homa.core;

import java.nio.ByteBuffer;

/**
 * Where the engine gets memory for the payload it receives, given by the I/O shell (see
 * {@link HomaEngine#setPayloadMemory}); {@link #HEAP} by default. A message that arrives whole in
 * one datagram is {@link #keep kept} (a shell that owns the datagram's buffer retains a slice of
 * it, so the bytes are never copied); a longer one is assembled, with one copy, in chunks from
 * {@link #allocate}, allocated only as bytes arrive so that a peer claiming a huge length costs
 * nothing until it is granted. (A response whose request asked for one array,
 * {@link OutgoingPayload#responseAsArray()}, moves into a heap array of the engine's own once an
 * eighth of it has arrived, and its chunks come back here: see {@link IncomingMessage}.) Called on
 * the engine's thread, from inside an engine call.
 */
public interface PayloadMemory {
    /** Heap memory: kept datagrams are copied (the caller may reuse its buffer), chunks are arrays. */
    PayloadMemory HEAP = new HeapPayloadMemory();

    /**
     * Keeps bytes {@code [index, index + length)} (absolute indices) of the datagram being passed to
     * {@link HomaEngine#onDatagram} right now, beyond that call.
     */
    PayloadBuffer keep(ByteBuffer datagram, int index, int length);

    /** New writable memory of exactly {@code length} bytes (one reassembly chunk). */
    PayloadBuffer allocate(int length);
}
