package io.homa.core;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** ReceivedMessage built directly from heap parts, as IncomingMessage hands them over. */
class ReceivedMessageTest {

    private static byte[] seq(int n, int from) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (from + i);
        }
        return b;
    }

    private static ReceivedMessage message(byte[]... chunks) {
        PayloadBuffer[] parts = new PayloadBuffer[chunks.length];
        int length = 0;
        for (int i = 0; i < chunks.length; i++) {
            parts[i] = new HeapPayloadMemory.Chunk(chunks[i]);
            length += chunks[i].length;
        }
        return ReceivedMessage.assembled(length, parts);
    }

    private static ReceivedMessage threeChunks() {
        return message(seq(4, 0), seq(4, 4), seq(2, 8)); // 4 + 4 + 2 = 10 bytes
    }

    @Test
    void length_reported() {
        assertEquals(10, threeChunks().length());
    }

    @Test
    void toByteArray_multiChunk_concatenates() {
        assertArrayEquals(seq(10, 0), threeChunks().toByteArray());
    }

    @Test
    void toByteArray_singleChunk_isACopy() {
        byte[] chunk = seq(5, 0);
        ReceivedMessage r = message(chunk);
        byte[] out = r.toByteArray();
        assertArrayEquals(chunk, out);
        assertNotSame(chunk, out);
        out[0] = 99;
        assertEquals(0, r.toByteArray()[0]);
    }

    @Test
    void toByteArray_eachCallFresh() {
        ReceivedMessage r = threeChunks();
        byte[] a = r.toByteArray();
        a[9] = -1;
        assertEquals(9, r.toByteArray()[9]);
    }

    @Test
    void copyTo_atOffset_leavesRestOfDestinationAlone() {
        byte[] dst = new byte[16];
        java.util.Arrays.fill(dst, (byte) -7);
        threeChunks().copyTo(dst, 3);
        for (int i = 0; i < 3; i++) {
            assertEquals(-7, dst[i]);
        }
        for (int i = 0; i < 10; i++) {
            assertEquals(i, dst[3 + i]);
        }
        for (int i = 13; i < 16; i++) {
            assertEquals(-7, dst[i]);
        }
    }

    @Test
    void copyTo_destinationTooSmall_throws() {
        assertThrows(IndexOutOfBoundsException.class, () -> threeChunks().copyTo(new byte[9], 0));
    }

    @Test
    void buffers_oneReadOnlyBufferPerChunkInOrder() {
        ByteBuffer[] bs = threeChunks().buffers();
        assertEquals(3, bs.length);
        int expect = 0;
        for (ByteBuffer b : bs) {
            assertTrue(b.isReadOnly());
            while (b.hasRemaining()) {
                assertEquals(expect++, b.get());
            }
        }
        assertEquals(10, expect);
        assertThrows(ReadOnlyBufferException.class, () -> threeChunks().buffers()[0].put(0, (byte) 1));
    }

    @Test
    void buffers_freshPositionsOnEveryCall() {
        ReceivedMessage r = threeChunks();
        ByteBuffer[] first = r.buffers();
        first[0].get();
        first[0].get();
        ByteBuffer[] second = r.buffers();
        assertEquals(0, second[0].position());
        assertEquals(4, second[0].remaining());
    }

    @Test
    void zeroLength_everyViewEmpty() {
        ReceivedMessage r = message();
        assertEquals(0, r.length());
        assertEquals(0, r.toByteArray().length);
        assertEquals(0, r.buffers().length);
        r.copyTo(new byte[0], 0);
        assertEquals(0, r.takeParts().length);
    }

    @Test
    void takeParts_once_thenReleaseDoesNothing() {
        int[] released = new int[1];
        PayloadBuffer part = new PayloadBuffer() {
            private final ByteBuffer bytes = ByteBuffer.wrap(seq(3, 0));

            @Override
            public ByteBuffer bytes() {
                return bytes;
            }

            @Override
            public void free() {
                released[0]++;
            }
        };
        ReceivedMessage r = ReceivedMessage.assembled(3, new PayloadBuffer[]{part});
        assertEquals(part, r.takeParts()[0]);
        r.release();
        assertEquals(0, released[0], "the taker releases the parts");
        assertThrows(IllegalStateException.class, r::takeParts);
    }

    @Test
    void release_releasesEachPartOnce() {
        int[] released = new int[1];
        PayloadBuffer part = new PayloadBuffer() {
            @Override
            public ByteBuffer bytes() {
                return ByteBuffer.allocate(2);
            }

            @Override
            public void free() {
                released[0]++;
            }
        };
        ReceivedMessage r = ReceivedMessage.assembled(4, new PayloadBuffer[]{part, part});
        r.release();
        r.release();
        assertEquals(2, released[0]);
        assertThrows(IllegalStateException.class, r::takeParts);
    }
}
