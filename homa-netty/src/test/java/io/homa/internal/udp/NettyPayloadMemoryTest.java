package io.homa.internal.udp;

import io.homa.core.EngineConfig;
import io.homa.core.EngineEvent;
import io.homa.core.HomaEngine;
import io.homa.core.ReceivedMessage;
import io.homa.core.wire.PacketEncoder;
import io.homa.internal.observe.ShellCounter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shell's received payload memory with the real engine and pooled buffers: segments of a
 * longer message kept in the buffer they were read into where that buffer is well used (one part
 * each, no copy), copied into a chunk where it is not or where a segment is short; and every
 * reference to the read buffer given back once the message is (the leak detector runs at PARANOID).
 */
class NettyPayloadMemoryTest {
    private static final InetSocketAddress PEER = new InetSocketAddress("127.0.0.1", 9001);
    /** Loopback's datagrams (segments of 16 KiB and more are kept), the whole message unscheduled. */
    private static final EngineConfig CFG = EngineConfig.builder().pacerEnabled(false).mtu(65_000)
            .unscheduledBytes(200_000).build();
    private static final int SEG = NettyPayloadMemory.MIN_KEPT_SEGMENT;
    private static final int CAPACITY = 64 * 1024;
    private static final long CLIENT_ID = 2;

    private final long[] shell = new long[ShellCounter.values().length];
    private final NettyPayloadMemory memory = new NettyPayloadMemory();
    private final HomaEngine engine = new HomaEngine(CFG, 1);

    NettyPayloadMemoryTest() {
        memory.allocator(PooledByteBufAllocator.DEFAULT);
        memory.counters(shell);
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
     * A request of {@code segments * segment} bytes whose DATA packets, back to back, make one
     * coalesced datagram (as UDP GRO hands it over), in a read buffer of {@code capacity}; fed to
     * the engine as the loop does, {@code dense} being the loop's verdict on that buffer.
     *
     * @return the read buffer (its own reference already dropped, as Netty's read drops it)
     */
    private ByteBuf receive(int segments, int segment, int capacity, boolean dense) {
        int length = segments * segment;
        ByteBuffer payload = ByteBuffer.wrap(pattern(length));
        ByteBuf buffer = PooledByteBufAllocator.DEFAULT.directBuffer(capacity, capacity);
        ByteBuffer nio = buffer.internalNioBuffer(0, capacity);
        int start = nio.position();
        for (int i = 0; i < segments; i++) {
            PacketEncoder.data(nio, CLIENT_ID, length, length, i * segment, 1, false, 0, 0, payload, i * segment, segment);
        }
        ByteBuf datagram = buffer.retainedSlice(0, nio.position() - start);
        buffer.release();
        ByteBuffer view = datagram.nioBuffer();
        memory.receiving(datagram, view, dense);
        try {
            engine.onDatagram(0, PEER, view);
        } finally {
            memory.receiving(null, null, false);
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
    void denseReadBuffer_segmentsKeptInIt_oneByteBufOverThemAll_freedWithTheMessage() {
        ByteBuf buffer = receive(3, SEG, CAPACITY, true);
        ReceivedMessage m = request();
        assertEquals(3, m.partCount(), "one part per segment, no chunk");
        assertEquals(3 * SEG, shell[ShellCounter.RECEIVE_PAYLOAD_BYTES_KEPT.ordinal()]);
        assertTrue(buffer.refCnt() > 0, "the message holds the read buffer");
        ByteBuf whole = NettyPayloadMemory.toByteBuf(m);
        assertArrayEquals(pattern(3 * SEG), ByteBufUtil.getBytes(whole));
        whole.release();
        assertEquals(0, buffer.refCnt(), "every reference given back");
    }

    @Test
    void denseReadBuffer_copiedOutAsAnArray_thenReleased() {
        ByteBuf buffer = receive(3, SEG, CAPACITY, true);
        ReceivedMessage m = request();
        assertArrayEquals(pattern(3 * SEG), m.toByteArray());
        m.release();
        assertEquals(0, buffer.refCnt());
    }

    @Test
    void sparseReadBuffer_copiedIntoAChunk_readBufferFreeAtOnce() {
        ByteBuf buffer = receive(3, SEG, CAPACITY, false);
        assertEquals(0, buffer.refCnt(), "nothing kept from the read buffer");
        ReceivedMessage m = request();
        assertEquals(1, m.partCount(), "one chunk");
        assertEquals(0, shell[ShellCounter.RECEIVE_PAYLOAD_BYTES_KEPT.ordinal()]);
        ByteBuf whole = NettyPayloadMemory.toByteBuf(m);
        assertArrayEquals(pattern(3 * SEG), ByteBufUtil.getBytes(whole));
        whole.release();
    }

    @Test
    void shortSegments_copiedEvenFromADenseBuffer() {
        int segment = SEG - 1; // an MTU-sized segment is far shorter
        ByteBuf buffer = receive(3, segment, CAPACITY, true);
        assertEquals(0, buffer.refCnt(), "nothing kept");
        ReceivedMessage m = request();
        assertEquals(1, m.partCount());
        assertArrayEquals(pattern(3 * segment), m.toByteArray());
        m.release();
    }
}
