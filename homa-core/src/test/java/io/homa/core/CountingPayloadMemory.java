package io.homa.core;

import java.nio.ByteBuffer;

/**
 * Heap payload memory that counts what it hands out and what comes back, and fails a read after
 * the release or a second release: the engine's ownership of received memory, made checkable.
 */
public final class CountingPayloadMemory implements PayloadMemory {
    int kept;
    int keptSegments;
    int allocated;
    int released;
    /** Whether segments of longer messages are kept too ({@link #keepSegment}), as a shell may. */
    private final boolean keepsSegments;

    public CountingPayloadMemory() {
        this(false);
    }

    public CountingPayloadMemory(boolean keepsSegments) {
        this.keepsSegments = keepsSegments;
    }

    /** Buffers handed out and not yet released. */
    public int live() {
        return kept + keptSegments + allocated - released;
    }

    @Override
    public PayloadBuffer keep(ByteBuffer datagram, int index, int length) {
        kept++;
        return counted(PayloadMemory.HEAP.keep(datagram, index, length));
    }

    @Override
    public PayloadBuffer allocate(int length) {
        allocated++;
        return counted(PayloadMemory.HEAP.allocate(length));
    }

    @Override
    public PayloadBuffer keepSegment(ByteBuffer datagram, int index, int length) {
        if (!keepsSegments) {
            return null;
        }
        keptSegments++;
        return counted(PayloadMemory.HEAP.keep(datagram, index, length));
    }

    /** Buffers handed out so far. */
    public int handedOut() {
        return kept + keptSegments + allocated;
    }

    private PayloadBuffer counted(PayloadBuffer b) {
        return new PayloadBuffer() {
            private boolean done;

            @Override
            public ByteBuffer bytes() {
                if (done) {
                    throw new IllegalStateException("read after release");
                }
                return b.bytes();
            }

            @Override
            public void free() {
                if (done) {
                    throw new IllegalStateException("released twice");
                }
                done = true;
                released++;
            }
        };
    }
}
