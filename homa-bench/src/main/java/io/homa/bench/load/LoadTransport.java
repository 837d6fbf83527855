package io.homa.bench.load;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;

/**
 * One protocol as the load generator uses it: an optional server at the node's address that
 * answers each request with as many bytes as its first 4 bytes ask for, and calls to other nodes.
 */
public interface LoadTransport extends AutoCloseable {
    /**
     * Sends a request of {@code length} bytes (at least 4) asking for {@code responseLength} bytes
     * back; the future completes with the response's length.
     */
    CompletableFuture<Integer> call(InetSocketAddress server, int length, int responseLength);

    /**
     * As {@link #call(InetSocketAddress, int, int)}; a transport that can see when the request
     * leaves its own queue tells {@code observer} (on its I/O thread, at most once). The default
     * tells nothing (Homa: its engine's queues are not visible per call).
     */
    default CompletableFuture<Integer> call(InetSocketAddress server, int length, int responseLength, SendObserver observer) {
        return call(server, length, responseLength);
    }

    /**
     * Told when a request was taken up by the transport's I/O thread and when the kernel could
     * start taking its bytes (later when earlier requests' bytes were still waiting for room).
     */
    @FunctionalInterface
    interface SendObserver {
        SendObserver NONE = (ioStartNanos, startedNanos) -> { };

        /** Both times are {@link System#nanoTime()}. */
        void sent(long ioStartNanos, long startedNanos);
    }

    /** The transport's own counters (for Homa: the engine's and the shell's), for the results. */
    default java.util.Map<String, Object> metrics() {
        return java.util.Map.of();
    }

    /** Stops serving and calling; pending calls fail. */
    @Override
    void close();

    /** A request: the wanted response length (big-endian int) then zeros. */
    static byte[] request(int length, int responseLength) {
        byte[] b = new byte[Math.max(SizeDistribution.MIN_REQUEST, length)];
        b[0] = (byte) (responseLength >>> 24);
        b[1] = (byte) (responseLength >>> 16);
        b[2] = (byte) (responseLength >>> 8);
        b[3] = (byte) responseLength;
        return b;
    }
}
