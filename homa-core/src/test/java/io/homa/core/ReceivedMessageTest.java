package io.homa.core;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** ReceivedMessage built directly from chunks, as IncomingMessage hands them over. */
class ReceivedMessageTest {

    private static byte[] seq(int n, int from) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (from + i);
        }
        return b;
    }

    private static ReceivedMessage threeChunks() {
        // chunk size 4: 4 + 4 + 2 = 10 bytes
        return new ReceivedMessage(10, new byte[][]{seq(4, 0), seq(4, 4), seq(2, 8)}, 4);
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
        ReceivedMessage r = new ReceivedMessage(5, new byte[][]{chunk}, 64 * 1024);
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
    void buffers_limitedToMessageLengthEvenIfLastChunkLarger() {
        ReceivedMessage r = new ReceivedMessage(6, new byte[][]{seq(4, 0), seq(4, 4)}, 4);
        ByteBuffer[] bs = r.buffers();
        assertEquals(4, bs[0].remaining());
        assertEquals(2, bs[1].remaining());
        assertArrayEquals(seq(6, 0), r.toByteArray());
        byte[] dst = new byte[6];
        r.copyTo(dst, 0);
        assertArrayEquals(seq(6, 0), dst);
    }

    @Test
    void zeroLength_everyViewEmpty() {
        ReceivedMessage r = new ReceivedMessage(0, new byte[][]{new byte[0]}, 64 * 1024);
        assertEquals(0, r.length());
        assertEquals(0, r.toByteArray().length);
        ByteBuffer[] bs = r.buffers();
        assertEquals(1, bs.length);
        assertEquals(0, bs[0].remaining());
        r.copyTo(new byte[0], 0);
    }
}
