package io.homa.bench;

import java.net.InetSocketAddress;

/**
 * An echo server of one transport: it answers every request with the request's bytes. It binds to
 * {@link NettyIo#HOST} (loopback unless told otherwise) and owns its threads until {@link #close()}.
 */
public interface EchoServer extends AutoCloseable {
    /** Where clients reach it ({@link NettyIo#HOST} and the port the kernel chose). */
    InetSocketAddress address();

    /** What a server in another process spent in an interval: {@link #stop} ends the interval. */
    @FunctionalInterface
    interface Cost {
        CostMeter.Cost stop();
    }

    /**
     * Starts measuring what the server's process spends, or null when the server runs in this
     * process (whose own cost meter then counts it already).
     */
    default Cost startCost() {
        return null;
    }

    /** Stops serving and frees its threads, sockets and buffers. Idempotent. */
    @Override
    void close();
}
