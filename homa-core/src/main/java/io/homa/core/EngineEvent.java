package io.homa.core;

import java.net.InetSocketAddress;

/**
 * Something the application must hear about. Owned by the caller once polled; the message it
 * carries is not touched by the engine again. A caller done with an event may give it back with
 * {@link HomaEngine#recycle}, after which it must not read it again (the engine fills it anew).
 */
public final class EngineEvent {
    /** What happened. */
    public enum Kind {
        /** A complete request arrived; answer it with {@link HomaEngine#respond}. */
        REQUEST,
        /** The response to one of our requests arrived complete; the RPC is finished. */
        RESPONSE,
        /** One of our requests failed; the RPC is finished. */
        FAILED,
        /**
         * The client gave up a request delivered to us earlier (its CANCEL arrived): the server RPC
         * is gone, a response to it is refused ({@link HomaEngine#respond} returns false).
         */
        CANCELLED
    }

    private Kind kind;
    private long rpcId;
    private InetSocketAddress peer;
    private ReceivedMessage message;
    private RpcError error;
    private long deadline;
    /** Given back and waiting among the engine's spares. */
    boolean recycled;

    EngineEvent() {
    }

    EngineEvent set(Kind kind, long rpcId, InetSocketAddress peer, ReceivedMessage message, RpcError error) {
        this.kind = kind;
        this.rpcId = rpcId;
        this.peer = peer;
        this.message = message;
        this.error = error;
        this.deadline = 0;
        return this;
    }

    EngineEvent deadline(long deadline) {
        this.deadline = deadline;
        return this;
    }

    public Kind kind() { return kind; }

    /** The RPC's client id (even), as returned by {@link HomaEngine#startRequest} on the client. */
    public long rpcId() { return rpcId; }

    /** The other end: the client for a REQUEST, the server otherwise. */
    public InetSocketAddress peer() { return peer; }

    /** The request or response; {@code null} for FAILED. */
    public ReceivedMessage message() { return message; }

    /** Why the RPC failed; {@code null} unless FAILED. */
    public RpcError error() { return error; }

    /**
     * REQUEST: when the client stops waiting, on the engine's clock (the {@code now} values it is
     * given, ns): the time of the request's first packet plus the time left that the client sent
     * in it. 0 when the client sent none (an older peer, or a call without a deadline).
     */
    public long deadline() { return deadline; }

    @Override
    public String toString() {
        return kind + "{id=" + rpcId + " peer=" + peer
                + (message != null ? " len=" + message.length() : "") + (error != null ? " " + error : "") + "}";
    }
}
