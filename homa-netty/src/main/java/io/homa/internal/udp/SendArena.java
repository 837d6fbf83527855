package io.homa.internal.udp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Iterator;

/**
 * The direct memory the engine writes outgoing datagrams into: a few large buffers, each filled
 * back to back and sent as slices. A buffer is reused once every slice of it has been released
 * (its reference count is back to our one reference); until then a fresh one is taken.
 *
 * <p>The memory is plain {@link ByteBuffer#allocateDirect} wrapped as a {@code ByteBuf}, so the
 * garbage collector frees it: a slice Netty never released can cost a reuse, never a leak. This
 * also keeps the send path clear of the leak detector's bookkeeping, which at the PARANOID level
 * records a stack trace for every slice. Confined to one event loop (Netty releases sent slices on
 * the loop too).
 */
final class SendArena {
    /**
     * Buffers kept for reuse, at most: with 256 KiB buffers, 4 MiB per event loop, the channels'
     * write high-water mark (Transport), so the slices Netty may still hold queued do not force
     * fresh allocations; beyond that a buffer is left to the garbage collector.
     */
    private static final int MAX_SPARE = 16;

    private final int bufferBytes;
    private final ArrayDeque<ByteBuf> spare = new ArrayDeque<>();
    private ByteBuf current;

    SendArena(int bufferBytes) {
        this.bufferBytes = bufferBytes;
    }

    /** A buffer with at least {@code needed} writable bytes at its writer index. */
    ByteBuf buffer(int needed) {
        if (current != null && current.writableBytes() >= needed) {
            return current;
        }
        if (current != null) {
            if (spare.size() >= MAX_SPARE) {
                spare.poll(); // the collector takes it once its slices are gone
            }
            spare.add(current);
        }
        current = reusable();
        if (current == null) {
            current = Unpooled.wrappedBuffer(ByteBuffer.allocateDirect(Math.max(bufferBytes, needed))).clear();
        }
        return current;
    }

    private ByteBuf reusable() {
        for (Iterator<ByteBuf> it = spare.iterator(); it.hasNext(); ) {
            ByteBuf b = it.next();
            if (b.refCnt() == 1) { // no slice of it is still queued or in flight
                it.remove();
                return b.clear();
            }
        }
        return null;
    }
}
