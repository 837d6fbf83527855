package io.homa.core;

import java.net.InetSocketAddress;

/**
 * Hears about the rare protocol events that counters cannot describe one by one (RESENDs,
 * timeouts, restarts, completed RPCs), for tracing (the shell turns them into JFR events).
 *
 * <p>Called on the engine's thread, in the middle of its work: an implementation must be quick,
 * must not block, and must not call back into the engine. Every method has a no-op default; the
 * engine starts with {@link #NONE}.
 */
public interface EngineObserver {
    /** Hears nothing. */
    EngineObserver NONE = new EngineObserver() { };

    /** A RESEND was queued to {@code peer} for bytes {@code [offset, offset + length)} of RPC {@code rpcId}. */
    default void resendSent(InetSocketAddress peer, long rpcId, int offset, int length) { }

    /** A valid RESEND arrived from {@code peer} (its sender id {@code rpcId}). */
    default void resendReceived(InetSocketAddress peer, long rpcId, int offset, int length) { }

    /** A client RPC failed because its server stayed silent. */
    default void clientRpcTimedOut(InetSocketAddress peer, long rpcId) { }

    /** A client RPC's request starts over (the server answered RPC_UNKNOWN); {@code restarts} so far. */
    default void requestRestarted(InetSocketAddress peer, long rpcId, int restarts) { }

    /**
     * A client RPC received its whole response (just before its RESPONSE event is queued).
     *
     * @param retransmittedBytes request bytes this side sent again in answer to RESENDs
     * @param priority the priority level the server last granted the request's scheduled bytes
     */
    default void clientRpcCompleted(InetSocketAddress peer, long rpcId, int requestBytes, int responseBytes,
                                    long retransmittedBytes, int priority) { }
}
