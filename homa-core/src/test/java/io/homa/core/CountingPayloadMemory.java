package io.homa.core;

import java.nio.ByteBuffer;

/**
 * Heap payload memory that counts what it hands out and what comes back, and fails a read after
 * the release or a second release: the engine's ownership of received memory, made checkable.
 */
public final class CountingPayloadMemory implements PayloadMemory {
    int kept;
    int allocated;
    int released;

    /** Buffers handed out and not yet released. */
    public int live() {
        return kept + allocated - released;
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

    /** Buffers handed out so far. */
    public int handedOut() {
        return kept + allocated;
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
