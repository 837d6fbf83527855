package io.homa.collective.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * How one rank's messages move: over Homa, over TCP, or in the simulator. The schedules and their
 * execution ({@link OperationRun}) are the same whichever link carries them.
 */
public interface Link {
    /** Receives every message that arrives for this rank. */
    interface Inbound {
        /**
         * A message arrived. The callee owns {@code message} (it releases it) and answers
         * {@code reply} exactly once. Called on the link's threads.
         */
        void deliver(ByteBuf message, Reply reply);
    }

    /** The answer to one delivered message: taken, or refused with a reason the sender sees. */
    interface Reply {
        void ok();

        void refuse(String reason);
    }

    /** How a send ended: {@code failure} (not delivered) or {@code refusal} (the peer's reason), both null when taken. */
    interface SendCallback {
        void done(Throwable failure, String refusal);
    }

    /** A scheduled task that can be cancelled. */
    interface Timer {
        void cancel();
    }

    /** Starts delivering messages to {@code inbound}. */
    void start(Inbound inbound);

    /**
     * Sends {@code message} to rank {@code peer}; the link takes ownership. {@code callback} runs
     * once, on the link's threads (possibly before this returns).
     *
     * @param timeoutNanos how long the delivery may take
     */
    void send(int peer, ByteBuf message, long timeoutNanos, SendCallback callback);

    /** Runs {@code task} in {@code delayNanos} on the link's threads (virtual time in the simulator). */
    Timer schedule(long delayNanos, Runnable task);

    /** The link's clock (virtual in the simulator). */
    long nanoTime();

    ByteBufAllocator alloc();

    /** Stops the link; sends then fail. */
    void close();
}
