package io.homa.core;

import java.nio.ByteBuffer;

/** {@link PayloadMemory#HEAP}: byte arrays, nothing to release. */
final class HeapPayloadMemory implements PayloadMemory {
    @Override
    public PayloadBuffer keep(ByteBuffer datagram, int index, int length) {
        byte[] copy = new byte[length];
        datagram.get(index, copy, 0, length);
        return new Chunk(copy);
    }

    @Override
    public PayloadBuffer allocate(int length) {
        return new Chunk(new byte[length]);
    }

    /** A byte array as a {@link PayloadBuffer}. */
    static final class Chunk implements PayloadBuffer {
        private final ByteBuffer bytes;

        Chunk(byte[] array) {
            this.bytes = ByteBuffer.wrap(array);
        }

        @Override
        public ByteBuffer bytes() {
            return bytes;
        }

        /** The array itself (its bytes are all of this part). */
        byte[] array() {
            return bytes.array();
        }

        @Override
        public void free() {
            // the collector frees it
        }
    }
}
