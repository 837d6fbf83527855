package io.homa.bench;

import java.util.concurrent.CompletableFuture;

/**
 * A client of one transport, bound to one server. {@link #call} may be called from any thread and
 * any number of calls may be outstanding; replies may come back in any order.
 */
public interface EchoClient extends AutoCloseable {
    /**
     * Sends {@code request} and completes with the server's reply (for an echo server, a copy of
     * the request). The array is read before the method returns or while the call is in flight;
     * do not change it until the future completes. The future completes exceptionally if the
     * client closes or the transport fails; it never times out by itself (callers bound their wait).
     *
     * @throws IllegalArgumentException if the request is longer than the transport allows
     */
    CompletableFuture<byte[]> call(byte[] request);

    /**
     * Whether {@link #call} does its I/O on the calling thread and returns a completed future (a
     * plain blocking socket): callers that want several calls in flight then call it from as many
     * threads, as a user of such a client would.
     */
    default boolean blocking() {
        return false;
    }

    /** Fails every outstanding call, closes the client's sockets and stops its threads. Idempotent. */
    @Override
    void close();
}
