package io.homa.core;

import java.net.InetSocketAddress;

/**
 * Something the application must hear about. Events are immutable and owned by the caller once
 * polled; the message they carry is not touched by the engine again.
 */
public final class EngineEvent {
    /** What happened. */
    public enum Kind {
        /** A complete request arrived; answer it with {@link HomaEngine#respond}. */
        REQUEST,
        /** The response to one of our requests arrived complete; the RPC is finished. */
        RESPONSE,
        /** One of our requests failed; the RPC is finished. */
        FAILED
    }

    private final Kind kind;
    private final long rpcId;
    private final InetSocketAddress peer;
    private final ReceivedMessage message;
    private final RpcError error;

    private EngineEvent(Kind kind, long rpcId, InetSocketAddress peer, ReceivedMessage message, RpcError error) {
        this.kind = kind;
        this.rpcId = rpcId;
        this.peer = peer;
        this.message = message;
        this.error = error;
    }

    static EngineEvent request(long clientId, InetSocketAddress peer, ReceivedMessage m) {
        return new EngineEvent(Kind.REQUEST, clientId, peer, m, null);
    }

    static EngineEvent response(long clientId, InetSocketAddress peer, ReceivedMessage m) {
        return new EngineEvent(Kind.RESPONSE, clientId, peer, m, null);
    }

    static EngineEvent failed(long clientId, InetSocketAddress peer, RpcError error) {
        return new EngineEvent(Kind.FAILED, clientId, peer, null, error);
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

    @Override
    public String toString() {
        return kind + "{id=" + rpcId + " peer=" + peer
                + (message != null ? " len=" + message.length() : "") + (error != null ? " " + error : "") + "}";
    }
}
