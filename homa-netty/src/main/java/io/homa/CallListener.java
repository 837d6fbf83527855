package io.homa;

import java.net.InetSocketAddress;

/**
 * Hears about every client call of a socket when it ends ({@link HomaSocket#addCallListener}):
 * for latency metrics such as homa-micrometer's timers.
 *
 * <p><b>Threads and cost.</b> Called on the socket's event loop that ran the call, right when the
 * response (or failure) is known and before the caller's future completes: an implementation must
 * be quick (a histogram update, well under a microsecond), must not block and must not throw (an
 * exception is logged and ignored). A socket with no listener pays one empty-list check per call.
 */
@FunctionalInterface
public interface CallListener {
    /**
     * A call ended.
     *
     * @param server where the call went
     * @param requestBytes the request's length
     * @param responseBytes the response's length, or -1 if the call failed
     * @param durationNanos from the call to the end (the caller's view, queueing included)
     */
    void callEnded(InetSocketAddress server, int requestBytes, int responseBytes, long durationNanos);
}
