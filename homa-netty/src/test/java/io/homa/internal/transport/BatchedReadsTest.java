package io.homa.internal.transport;

import io.homa.HomaConfig;
import io.homa.HomaSocket;
import io.homa.Loopback;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.UncheckedBooleanSupplier;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.ArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A read round ends after a batch that came back short, and goes on after a full one (up to the limit). */
@org.junit.jupiter.api.extension.ExtendWith(io.homa.LeakCheck.class)
class BatchedReadsTest {
    private static final int SLOT = 1_500;
    private static final int BATCH = 32;

    private static RecvByteBufAllocator.ExtendedHandle handle(int maxMessagesPerRead) {
        RecvByteBufAllocator.ExtendedHandle h =
                (RecvByteBufAllocator.ExtendedHandle) new BatchedReads(SLOT * BATCH, maxMessagesPerRead).newHandle();
        EmbeddedChannel ch = new EmbeddedChannel();
        h.reset(ch.config());
        ch.finishAndReleaseAll();
        return h;
    }

    /** What Netty's epoll channel records for one recvmmsg that returned {@code received} datagrams. */
    private static void read(RecvByteBufAllocator.ExtendedHandle h, int received) {
        h.attemptedBytesRead(SLOT * BATCH);
        h.lastBytesRead(Math.max(1, received * SLOT));
        h.incMessagesRead(received);
    }

    @Test
    void shortBatch_endsTheRound() {
        RecvByteBufAllocator.ExtendedHandle h = handle(1024);
        read(h, 1);
        assertFalse(h.continueReading(UncheckedBooleanSupplier.TRUE_SUPPLIER),
                "one datagram of a batch of 32: the queue was empty, no read that would fail with EAGAIN");
    }

    @Test
    void fullBatch_readsOn_untilTheRoundsLimit() {
        RecvByteBufAllocator.ExtendedHandle h = handle(64);
        read(h, BATCH);
        assertTrue(h.continueReading(UncheckedBooleanSupplier.TRUE_SUPPLIER), "a full batch: more may wait");
        read(h, BATCH);
        assertFalse(h.continueReading(UncheckedBooleanSupplier.TRUE_SUPPLIER), "64 datagrams read: the round's limit");
    }

    /**
     * On a real socket of this run's transport (epoll: {@link BatchedReads}): a burst of more than
     * three batches, queued before reading starts, all arrives, and so do datagrams sent one at a
     * time after it (a round that ended on a short batch strands nothing: the socket is
     * level-triggered).
     */
    @Test
    void aSocket_readsABurstOfSeveralBatches_andLaterDatagrams_strandingNone() throws Exception {
        HomaConfig config = Loopback.config().build();
        Transport transport = new Transport(Loopback.shellConfig(config));
        int burst = 3 * Math.max(transport.receiveBatch, 16) + 5;
        int later = 5;
        AtomicInteger received = new AtomicInteger();
        CountDownLatch burstIn = new CountDownLatch(burst);
        CountDownLatch allIn = new CountDownLatch(burst + later);
        MultiThreadIoEventLoopGroup group = transport.newGroup(1, 0, new ArrayList<>(), () -> 0); // busy polling: select now
        try (DatagramChannel sender = DatagramChannel.open()) {
            Channel ch = transport.bind(group.next(), new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0, false, -1,
                    new ChannelInboundHandlerAdapter() {
                        @Override
                        public void channelRead(ChannelHandlerContext ctx, Object msg) {
                            ReferenceCountUtil.release(msg);
                            received.incrementAndGet();
                            burstIn.countDown();
                            allIn.countDown();
                        }
                    });
            InetSocketAddress to = (InetSocketAddress) ch.localAddress();
            for (int i = 0; i < burst; i++) { // queued in the socket: reading has not started
                sender.send(ByteBuffer.wrap(new byte[100]), to);
            }
            ch.config().setAutoRead(true);
            assertTrue(burstIn.await(30, TimeUnit.SECONDS), "burst: " + received.get() + " of " + burst + " read");
            for (int i = 0; i < later; i++) {
                sender.send(ByteBuffer.wrap(new byte[100]), to);
            }
            assertTrue(allIn.await(30, TimeUnit.SECONDS), received.get() + " of " + (burst + later) + " read");
            assertEquals(burst + later, received.get());
            ch.close().syncUninterruptibly();
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }
}
