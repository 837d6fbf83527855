package io.homa.internal.udp;

import io.homa.HomaMetrics;
import io.homa.internal.observe.ShellCounter;
import io.homa.HomaConfig;
import io.homa.HomaSocket;
import io.homa.Loopback;
import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.socket.DatagramPacket;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The order in which one loop's received datagrams reach the engine (counted, not timed), and that sockets use it. */
@org.junit.jupiter.api.extension.ExtendWith(io.homa.LeakCheck.class)
class ReceiveDrainTest {
    private static final InetSocketAddress PEER = new InetSocketAddress("127.0.0.1", 4000);
    private static final int SHORT_LIMIT = 40_000;
    private static final int SEGMENT = 8_000;
    /** Datagrams shorter than this are never deferred (the sockets use 16 KiB). */
    private static final int MIN_BULK = 4_000;

    /** What the engine got, by sender id, in order; every datagram is released as the loop's sink does. */
    private final List<Long> handed = new ArrayList<>();
    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    private final long[] shell = new long[ShellCounter.values().length];
    private int drains;
    private final List<DatagramPacket> all = new ArrayList<>();

    private ReceiveDrain drain(int maxDeferredBytes) {
        return new ReceiveDrain(p -> {
            handed.add(p.content().getLong(p.content().readerIndex() + WireFormat.OFF_SENDER_ID));
            p.release();
        }, tasks::add, () -> drains++, SHORT_LIMIT, MIN_BULK, maxDeferredBytes, shell);
    }

    private DatagramPacket data(long id, int messageLength, int payload) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(WireFormat.DATA_HEADER + payload);
        ByteBuffer nio = b.internalNioBuffer(0, WireFormat.DATA_HEADER + payload);
        PacketEncoder.dataHeader(nio, nio.position(), id, messageLength, messageLength, 0, 0, false, 0, 0, payload);
        b.writerIndex(WireFormat.DATA_HEADER + payload);
        return track(new DatagramPacket(b, PEER));
    }

    private DatagramPacket grant(long id) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(WireFormat.GRANT_LENGTH);
        ByteBuffer nio = b.internalNioBuffer(0, WireFormat.GRANT_LENGTH);
        b.writerIndex(PacketEncoder.grant(nio, id, 50_000, 3));
        return track(new DatagramPacket(b, PEER));
    }

    private DatagramPacket resend(long id) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(WireFormat.RESEND_LENGTH);
        ByteBuffer nio = b.internalNioBuffer(0, WireFormat.RESEND_LENGTH);
        b.writerIndex(PacketEncoder.resend(nio, id, 0, 1_000, 3, 0));
        return track(new DatagramPacket(b, PEER));
    }

    private DatagramPacket track(DatagramPacket p) {
        all.add(p);
        return p;
    }

    private void runTasks() {
        Runnable t;
        while ((t = tasks.poll()) != null) {
            t.run();
        }
    }

    private void assertAllReleased() {
        for (DatagramPacket p : all) {
            assertEquals(0, p.refCnt(), "a datagram was not released exactly once");
        }
    }

    @Test
    void shortRequestAndControl_readAfterLongData_reachTheEngineFirst() {
        ReceiveDrain d = drain(ReceiveDrain.MAX_DEFERRED_BYTES);
        d.offer(data(1, 1_000_000, SEGMENT)); // a long message's data, read first
        d.offer(data(2, 1_000_000, SEGMENT));
        d.offer(data(3, 100, 100)); // a 100 B request, read after it
        d.offer(grant(4)); // a control packet
        d.offer(data(5, 1_000_000, SEGMENT));

        assertEquals(List.of(3L, 4L), handed, "short request and control first, as they were read");
        assertEquals(3, d.deferred());
        assertEquals(3, shell[ShellCounter.RECEIVE_DEFERRED.ordinal()]);
        assertEquals(1, tasks.size(), "one task for the whole round");
        assertEquals(0, drains);

        runTasks(); // the I/O round is over
        assertEquals(List.of(3L, 4L, 1L, 2L, 5L), handed, "then the long data, oldest first");
        assertEquals(1, drains, "the loop drains the engine after the deferred data");
        assertEquals(0, d.deferred());
        assertAllReleased();
    }

    @Test
    void resend_readAfterHeldData_waitsBehindIt() {
        // A client's request DATA (held: a long message) and then its RESEND about that RPC: the
        // engine must see the request first, or it would not know the RPC and make the client
        // start the request over.
        ReceiveDrain d = drain(ReceiveDrain.MAX_DEFERRED_BYTES);
        d.offer(data(1, 1_000_000, SEGMENT));
        d.offer(resend(1));
        d.offer(grant(2)); // other control packets still go first
        assertEquals(List.of(2L), handed);
        runTasks();
        assertEquals(List.of(2L, 1L, 1L), handed, "the RESEND after the data it asks about");
        assertEquals(1, drains);
        assertEquals(1, shell[ShellCounter.RECEIVE_DEFERRED.ordinal()], "only the DATA counts as deferred");
        assertAllReleased();
    }

    @Test
    void resend_heldBehindData_isReleasedOnClose() {
        ReceiveDrain d = drain(ReceiveDrain.MAX_DEFERRED_BYTES);
        d.offer(data(1, 1_000_000, SEGMENT));
        d.offer(resend(1));
        assertTrue(d.holding());
        d.close();
        assertFalse(d.holding());
        runTasks();
        assertTrue(handed.isEmpty(), "nothing reaches the engine after close");
        assertAllReleased();
    }

    @Test
    void resend_withNothingHeld_goesStraightThrough() {
        ReceiveDrain d = drain(ReceiveDrain.MAX_DEFERRED_BYTES);
        d.offer(resend(7));
        assertEquals(List.of(7L), handed);
        assertTrue(tasks.isEmpty());
        assertAllReleased();
    }

    @Test
    void roundWithoutLongData_queuesNoTask() {
        ReceiveDrain d = drain(ReceiveDrain.MAX_DEFERRED_BYTES);
        d.offer(data(1, SHORT_LIMIT, 1_000)); // as long as the limit: still short
        d.offer(grant(2));
        assertEquals(List.of(1L, 2L), handed);
        assertTrue(tasks.isEmpty());
        assertEquals(0, shell[ShellCounter.RECEIVE_DEFERRED.ordinal()]);
        assertAllReleased();
    }

    @Test
    void smallDatagramsOfALongMessage_goStraightThrough() {
        ReceiveDrain d = drain(ReceiveDrain.MAX_DEFERRED_BYTES);
        d.offer(data(1, 1_000_000, MIN_BULK - WireFormat.DATA_HEADER - 1)); // one byte short of the floor
        d.offer(data(2, 1_000_000, MIN_BULK - WireFormat.DATA_HEADER)); // at the floor: bulk
        d.offer(data(3, 100, 100));
        assertEquals(List.of(1L, 3L), handed, "a small datagram is cheaper to handle than to defer");
        assertEquals(1, shell[ShellCounter.RECEIVE_DEFERRED.ordinal()]);
        runTasks();
        assertEquals(List.of(1L, 3L, 2L), handed);
        assertAllReleased();
    }

    @Test
    void deferral_isBounded_oldestGoFirstOnceTheBoundIsPassed() {
        int size = WireFormat.DATA_HEADER + SEGMENT;
        ReceiveDrain d = drain(2 * size);
        d.offer(data(1, 1_000_000, SEGMENT));
        d.offer(data(2, 1_000_000, SEGMENT));
        assertTrue(handed.isEmpty());
        d.offer(data(3, 1_000_000, SEGMENT)); // three held would pass the bound
        assertEquals(List.of(1L), handed);
        assertEquals(2, d.deferred());
        d.offer(data(4, 100, 100));
        assertEquals(List.of(1L, 4L), handed);
        runTasks();
        assertEquals(List.of(1L, 4L, 2L, 3L), handed);
        assertAllReleased();
    }

    @Test
    void close_releasesWhatWaits_andLaterDatagramsGoStraightThrough() {
        ReceiveDrain d = drain(ReceiveDrain.MAX_DEFERRED_BYTES);
        d.offer(data(1, 1_000_000, SEGMENT));
        d.offer(data(2, 1_000_000, SEGMENT));
        d.close();
        assertEquals(0, d.deferred());
        d.offer(data(3, 1_000_000, SEGMENT));
        runTasks(); // the task queued before close finds nothing
        assertEquals(List.of(3L), handed, "released, not handed to the engine");
        assertEquals(0, drains);
        assertAllReleased();
    }

    @Test
    void sockets_deferOnlyLongMessagesData() throws Exception {
        // The client's loop must read the responses: a caller waiting in get() would read them
        // itself (callerReads), in arrival order, with nothing else to put before them.
        try (HomaSocket server = HomaSocket.open(Loopback.config().build());
             HomaSocket client = HomaSocket.open(Loopback.config().callerReads(false).build())) {
            server.serve(r -> r.reply(r.toByteArray()));
            InetSocketAddress at = Loopback.addressOf(server);
            byte[] small = new byte[100];
            assertArrayEquals(small, client.call(at, small).get(30, TimeUnit.SECONDS));
            Loopback.awaitIdle(client, server);
            assertEquals(0, server.metrics().shell(HomaMetrics.Shell.RECEIVE_DEFERRED), "a 100 B request is never deferred");
            assertEquals(0, client.metrics().shell(HomaMetrics.Shell.RECEIVE_DEFERRED));

            byte[] large = new byte[1 << 20];
            new Random(1).nextBytes(large);
            assertArrayEquals(large, client.call(at, large).get(60, TimeUnit.SECONDS));
            Loopback.awaitIdle(client, server);
            assertTrue(server.metrics().shell(HomaMetrics.Shell.RECEIVE_DEFERRED) > 0, server.metrics().toString());
            assertTrue(client.metrics().shell(HomaMetrics.Shell.RECEIVE_DEFERRED) > 0, client.metrics().toString());
        }
    }

    @Test
    void sockets_atMtu1500WithoutGro_deferNothing() throws Exception {
        // Without GRO every datagram is one 1,500-byte packet (with GRO, coalesced datagrams of
        // 16 KiB and more are deferred like loopback's 64 KB ones).
        try (HomaSocket server = HomaSocket.open(Loopback.config().mtu(1500).gro(false).build());
             HomaSocket client = HomaSocket.open(Loopback.config().mtu(1500).gro(false).build())) {
            server.serve(r -> r.reply(r.toByteArray()));
            byte[] large = new byte[256 * 1024];
            new Random(2).nextBytes(large);
            assertArrayEquals(large, client.call(Loopback.addressOf(server), large).get(60, TimeUnit.SECONDS));
            Loopback.awaitIdle(client, server);
            assertTrue(server.metrics().shell(HomaMetrics.Shell.DATAGRAMS_RECEIVED) > 100, server.metrics().toString());
            assertEquals(0, server.metrics().shell(HomaMetrics.Shell.RECEIVE_DEFERRED), "1,500-byte datagrams are never deferred");
            assertEquals(0, client.metrics().shell(HomaMetrics.Shell.RECEIVE_DEFERRED));
        }
    }

    @Test
    void onlyWellFormedLongData_isBulk() {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.heapBuffer(WireFormat.DATA_HEADER);
        try {
            ByteBuffer nio = b.internalNioBuffer(0, WireFormat.DATA_HEADER);
            PacketEncoder.dataHeader(nio, nio.position(), 7, 1_000_000, 0, 0, 0, false, 0, 0, 0); // a pooled buffer's view starts at its offset
            b.writerIndex(WireFormat.DATA_HEADER);
            assertTrue(ReceiveDrain.isBulk(b, SHORT_LIMIT));
            assertFalse(ReceiveDrain.isBulk(b.slice(0, WireFormat.DATA_HEADER - 1), SHORT_LIMIT), "truncated header");
            b.setByte(WireFormat.OFF_MAGIC, 0);
            assertFalse(ReceiveDrain.isBulk(b, SHORT_LIMIT), "not Homa");
            b.setByte(WireFormat.OFF_MAGIC, WireFormat.MAGIC >>> 8);
            b.setByte(WireFormat.OFF_TYPE, PacketType.RESEND.code);
            assertFalse(ReceiveDrain.isBulk(b, SHORT_LIMIT), "control");
            b.setByte(WireFormat.OFF_TYPE, PacketType.DATA.code);
            b.setInt(WireFormat.DATA_OFF_MESSAGE_LENGTH, -1); // 4 GB as unsigned: long, and the engine drops it
            assertTrue(ReceiveDrain.isBulk(b, SHORT_LIMIT));
        } finally {
            b.release();
        }
    }
}
