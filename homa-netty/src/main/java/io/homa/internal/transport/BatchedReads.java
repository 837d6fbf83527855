package io.homa.internal.transport;

import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;

/**
 * The receive buffer allocator of an epoll socket that reads with {@code recvmmsg}: fixed-size
 * batches, as {@link FixedRecvByteBufAllocator}, but a read round ends as soon as one batch comes
 * back less than full.
 *
 * <p>Netty's epoll datagram channel keeps reading until a read returns nothing or the round's
 * message limit is reached, so every round ended with one {@code recvmmsg} that failed with
 * EAGAIN (and the {@code getsockopt} Netty makes with each): counted with strace, two of each per
 * 100 B echo, on the critical path, since the engine is drained only when the round ends. A batch
 * that was not filled means the socket's queue was empty a moment ago; the socket is
 * level-triggered, so a datagram that arrives just after is reported by the next
 * {@code epoll_wait}, which costs no more than the read saved. A full batch goes on reading as
 * before, up to {@code maxMessagesPerRead}, so an overloaded socket is still drained far ahead.
 * (Where the kernel had no {@code recvmmsg}, Netty would read one datagram per {@code recvmsg} and
 * every read would look short: one datagram per epoll round, slower under load but never stuck.
 * Linux has had {@code recvmmsg} since 2.6.33.)
 */
final class BatchedReads extends FixedRecvByteBufAllocator {
    BatchedReads(int batchBytes, int maxMessagesPerRead) {
        super(batchBytes);
        maxMessagesPerRead(maxMessagesPerRead);
    }

    @Override
    public Handle newHandle() {
        return new StopOnShortBatch((ExtendedHandle) super.newHandle());
    }

    /** Netty's handle, with the round ending after a batch that came back short. */
    private static final class StopOnShortBatch extends DelegatingHandle implements ExtendedHandle {
        StopOnShortBatch(ExtendedHandle delegate) {
            super(delegate);
        }

        @Override
        public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
            return lastBytesRead() >= attemptedBytesRead()
                    && ((ExtendedHandle) delegate()).continueReading(maybeMoreDataSupplier);
        }
    }
}
