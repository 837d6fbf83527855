package io.homa.bench;

import io.netty.channel.Channel;

/**
 * Writes on a channel now and flushes once the event loop has run the tasks already queued: calls
 * handed to the loop together leave in one system call (writev, or sendmmsg for datagrams), as
 * gRPC-java's write queue does. A lone call costs one extra task run on the loop, no wake-up.
 * Used only on the channel's event loop.
 */
final class FlushBatcher implements Runnable {
    private final Channel channel;
    private boolean flushQueued;

    FlushBatcher(Channel channel) {
        this.channel = channel;
    }

    /** Writes {@code msg} (ownership passes to the channel) and makes sure a flush follows. */
    void write(Object msg) {
        channel.write(msg, channel.voidPromise());
        if (!flushQueued) {
            flushQueued = true;
            channel.eventLoop().execute(this);
        }
    }

    @Override
    public void run() {
        flushQueued = false;
        channel.flush();
    }
}
