package io.homa.internal.udp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

class DatagramViewsTest {
    private static final UnpooledByteBufAllocator ALLOC = new UnpooledByteBufAllocator(true, false, true);

    /** The bytes between the view's position and limit. */
    private static byte[] bytes(ByteBuffer view) {
        byte[] out = new byte[view.remaining()];
        view.get(view.position(), out);
        return out;
    }

    @Test
    void slicesOfOneReadBuffer_shareOneView_eachAroundItsOwnBytes() {
        ByteBuf read = ALLOC.directBuffer(64);
        for (int i = 0; i < 64; i++) {
            read.writeByte(i);
        }
        ByteBuf first = read.retainedSlice(0, 10);
        ByteBuf second = read.retainedSlice(20, 5);
        second.readerIndex(1); // a datagram whose reader index moved: its readable bytes only
        DatagramViews views = new DatagramViews();
        try {
            ByteBuffer a = views.of(first);
            assertEquals(ByteOrder.BIG_ENDIAN, a.order());
            assertEquals(0, a.position());
            assertEquals(10, a.remaining());
            assertEquals(9, bytes(a)[9]);
            ByteBuffer b = views.of(second);
            assertSame(a, b, "one view for the read buffer's datagrams");
            assertEquals(21, b.position());
            assertEquals(4, b.remaining());
            assertEquals(21, bytes(b)[0]);
            assertEquals(24, bytes(b)[3]);
        } finally {
            first.release();
            second.release();
            read.release();
        }
    }

    @Test
    void anotherReadBuffer_getsAViewOfItsOwnMemory() {
        ByteBuf one = ALLOC.directBuffer(16).writeZero(16);
        ByteBuf two = ALLOC.directBuffer(16).writeBytes(new byte[]{7, 8, 9});
        DatagramViews views = new DatagramViews();
        try {
            ByteBuffer a = views.of(one);
            ByteBuffer b = views.of(two);
            assertNotSame(a, b);
            assertEquals(3, b.remaining());
            assertEquals(7, bytes(b)[0]);
            ByteBuffer c = views.of(one.readerIndex(4));
            assertEquals(12, c.remaining(), "the view follows the buffer's readable bytes");
            assertEquals(4, c.position());
        } finally {
            one.release();
            two.release();
        }
    }

    @Test
    void aHeapDatagram_getsAViewEachTime() {
        ByteBuf heap = Unpooled.wrappedBuffer(new byte[]{1, 2, 3, 4});
        DatagramViews views = new DatagramViews();
        ByteBuffer a = views.of(heap);
        ByteBuffer b = views.of(heap);
        assertNotSame(a, b);
        assertEquals(4, a.remaining());
        assertEquals(1, bytes(a)[0]);
    }
}
