package io.homa.internal.rpc;

import java.net.InetSocketAddress;

/**
 * Hears the end of every client call (the socket's call listeners, as the shell sees them).
 * Called on the event loop that ran the call; see the API's {@code CallListener} for the rules.
 * Internal use only.
 */
public interface CallObserver {
    /** Whether anyone listens now: when not, the loop skips the call's timing. */
    boolean observing();

    /** A call ended ({@code responseBytes} -1: it failed). */
    void callEnded(InetSocketAddress server, int requestBytes, int responseBytes, long durationNanos);
}
