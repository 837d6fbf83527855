package io.homa;

import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.UncheckedBooleanSupplier;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A read round ends after a batch that came back short, and goes on after a full one (up to the limit). */
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
}
