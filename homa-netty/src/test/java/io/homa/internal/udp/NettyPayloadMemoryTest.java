package io.homa.internal.udp;

import io.homa.core.EngineConfig;
import io.homa.core.EngineEvent;
import io.homa.core.HomaEngine;
import io.homa.core.ReceivedMessage;
import io.homa.core.wire.PacketEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shell's received payload memory with the real engine and pooled buffers: a message that
 * came in one datagram is kept in the buffer it was read into (a recvmmsg batch), and
 * {@link NettyPayloadMemory#detached} moves it into memory of its own, giving that buffer back
 * (the leak detector runs at PARANOID).
 */
@org.junit.jupiter.api.extension.ExtendWith(io.homa.LeakCheck.class)
class NettyPayloadMemoryTest {
    private static final InetSocketAddress PEER = new InetSocketAddress("127.0.0.1", 9001);
    private static final EngineConfig CFG = EngineConfig.builder().pacerEnabled(false).build();
    /** A read batch's buffer: 16 slots of 64 KB. */
    private static final int READ_BUFFER = 1 << 20;

    private final NettyPayloadMemory memory = new NettyPayloadMemory();
    private final HomaEngine engine = new HomaEngine(CFG, 1);

    NettyPayloadMemoryTest() {
        memory.allocator(PooledByteBufAllocator.DEFAULT);
        engine.setPayloadMemory(memory);
    }

    private static byte[] pattern(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 13 + 5);
        }
        return b;
    }

    /**
     * A request of {@code length} bytes in one datagram, read into a batch buffer as a slice of
     * it and fed to the engine as the loop does.
     *
     * @return the batch buffer (its own reference already dropped, as Netty's read drops it)
     */
    private ByteBuf receive(int length) {
        ByteBuf buffer = PooledByteBufAllocator.DEFAULT.directBuffer(READ_BUFFER, READ_BUFFER);
        ByteBuffer nio = buffer.internalNioBuffer(0, READ_BUFFER);
        int start = nio.position();
        PacketEncoder.data(nio, 2, length, length, 0, 1, false, 0, 0, ByteBuffer.wrap(pattern(length)), 0, length);
        ByteBuf datagram = buffer.retainedSlice(0, nio.position() - start);
        buffer.release();
        ByteBuffer view = datagram.nioBuffer();
        memory.receiving(datagram, view);
        try {
            engine.onDatagram(0, PEER, view);
        } finally {
            memory.receiving(null, null);
            datagram.release(); // as the loop releases every datagram it fed
        }
        return buffer;
    }

    private ReceivedMessage request() {
        EngineEvent ev = engine.pollEvent();
        assertEquals(EngineEvent.Kind.REQUEST, ev.kind());
        return ev.message();
    }

    @Test
    void aMessageInOneDatagram_holdsItsReadBuffer_untilReleased() {
        ByteBuf buffer = receive(100);
        ReceivedMessage m = request();
        assertTrue(buffer.refCnt() > 0, "kept in the read buffer, not copied");
        assertArrayEquals(pattern(100), m.toByteArray());
        m.release();
        assertEquals(0, buffer.refCnt());
    }

    @Test
    void detached_copiesItOut_andGivesTheReadBufferBackAtOnce() {
        ByteBuf buffer = receive(100);
        ReceivedMessage kept = request();
        ReceivedMessage own = memory.detached(kept);
        assertEquals(0, buffer.refCnt(), "the 1 MiB read buffer is free while the message lives");
        assertEquals(100, own.length());
        ByteBuf b = NettyPayloadMemory.toByteBuf(own);
        assertEquals(100, b.capacity(), "memory of its own, of its length");
        assertArrayEquals(pattern(100), ByteBufUtil.getBytes(b));
        assertTrue(b.release(), "the copy is freed with the message");
    }

    @Test
    void detached_leavesAMessageThatIsNotKeptAsItIs() {
        ReceivedMessage heap = ReceivedMessage.of(pattern(10));
        assertSame(heap, memory.detached(heap));
        receive(50);
        ReceivedMessage own = memory.detached(request());
        assertSame(own, memory.detached(own), "already in memory of its own");
        own.release();
    }
}
