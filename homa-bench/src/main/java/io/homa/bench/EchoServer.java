package io.homa.bench;

import java.net.InetSocketAddress;

/**
 * An echo server of one transport: it answers every request with the request's bytes. It binds to
 * 127.0.0.1 only and owns its threads until {@link #close()}.
 */
public interface EchoServer extends AutoCloseable {
    /** Where clients reach it (127.0.0.1 and the port the kernel chose). */
    InetSocketAddress address();

    /** Stops serving and frees its threads, sockets and buffers. Idempotent. */
    @Override
    void close();
}
