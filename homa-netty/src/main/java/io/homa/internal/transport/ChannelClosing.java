package io.homa.internal.transport;

import io.netty.channel.ChannelFuture;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Waiting for a socket's channels (UDP, the TCP listeners and connections of the fallback and the
 * key exchange) to close before its event loops stop. A channel still closing when its loop stops
 * is closed by the loop's shutdown, and Netty then logs a warning with a stack trace for it ("Can't
 * invoke task later as EventLoop rejected it"): io_uring closes sockets asynchronously, so there
 * every channel of a closed socket did.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class ChannelClosing {
    private ChannelClosing() {
    }

    /**
     * Waits for the closes {@code closing} (futures of {@code Channel.close()}) until
     * {@code giveUpNanos} ({@link System#nanoTime()}) at the latest. The caller passes a time already
     * passed where it must not wait (on an event loop, or holding an engine's lock, which a loop may
     * be waiting for); a close of a channel of this thread's own loop is never waited for.
     */
    public static void await(List<ChannelFuture> closing, long giveUpNanos) {
        for (ChannelFuture f : closing) {
            if (f.channel().eventLoop().inEventLoop()) {
                continue;
            }
            long left = giveUpNanos - System.nanoTime();
            if (left <= 0) {
                return;
            }
            f.awaitUninterruptibly(TimeUnit.NANOSECONDS.toMillis(left) + 1);
        }
    }
}
