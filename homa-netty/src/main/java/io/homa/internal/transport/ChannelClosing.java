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
     * Waits for the closes {@code closing} (futures of {@code Channel.close()}), {@code millis} at
     * most in all. Only off the event loops: a loop must never block (and a close it waited for
     * would need the loop itself); on a loop this returns at once.
     */
    public static void await(List<ChannelFuture> closing, long millis) {
        long giveUp = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        for (ChannelFuture f : closing) {
            if (f.channel().eventLoop().inEventLoop()) {
                continue;
            }
            long left = giveUp - System.nanoTime();
            if (left <= 0) {
                return;
            }
            f.awaitUninterruptibly(TimeUnit.NANOSECONDS.toMillis(left) + 1);
        }
    }
}
