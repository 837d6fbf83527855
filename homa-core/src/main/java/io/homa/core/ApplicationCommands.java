package io.homa.core;

import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketType;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * The application's commands on RPCs (for requests and responses, Linux Homa's homa_sendmsg):
 * start a request, answer one, give one up. A command that may be refused checks everything
 * first, the message's length and the engine's limits, so that a refusal changes nothing and the
 * caller may simply try again later (back-pressure, see docs/security.md).
 */
final class ApplicationCommands {
    private final EngineConfig cfg;
    private final EngineCounters counters;
    private final TickClock clock;
    private final RpcTable rpcs;
    private final MemoryLimits limits;
    private final OutgoingData outgoing;
    private final ControlPackets control;
    private final EngineEvents events;

    ApplicationCommands(EngineConfig cfg, EngineCounters counters, TickClock clock, RpcTable rpcs,
                        MemoryLimits limits, OutgoingData outgoing, ControlPackets control, EngineEvents events) {
        this.cfg = cfg;
        this.counters = counters;
        this.clock = clock;
        this.rpcs = rpcs;
        this.limits = limits;
        this.outgoing = outgoing;
        this.control = control;
        this.events = events;
    }

    /** Starts a client RPC sending {@code first}, or {@code parts} ({@code first} their first) if not null. */
    long startRequest(long now, InetSocketAddress server, ByteBuffer first, ByteBuffer[] parts, int length,
                      long deadline, boolean idempotent) {
        return startRequest(now, server, first, parts, null, length, deadline, idempotent);
    }

    /** {@link #startRequest(long, InetSocketAddress, ByteBuffer, ByteBuffer[], int, long, boolean)}, or of {@code source} if not null. */
    long startRequest(long now, InetSocketAddress server, ByteBuffer first, ByteBuffer[] parts, OutgoingPayload source,
                      int length, long deadline, boolean idempotent) {
        Objects.requireNonNull(server, "server");
        checkMessageLength("request", length);
        limits.checkOutgoingLength("request", length);
        if (rpcs.liveRpcs() >= cfg.maxRpcs) {
            counters.bump(Counter.RPC_LIMIT_REFUSALS);
            throw new EngineLimitException("maxRpcs", "engine holds maxRpcs=" + cfg.maxRpcs + " RPCs already");
        }
        limits.checkOutgoingRoom("request", length);
        Rpc rpc = rpcs.newClientRpc(server);
        rpc.startedAt = now;
        rpc.deadline = deadline;
        rpc.idempotent = idempotent;
        rpc.responseAsArray = source != null && source.responseAsArray();
        outgoing.start(rpc, first, parts, source, length);
        counters.bump(Counter.CLIENT_RPCS_STARTED);
        clock.arm(now);
        return rpc.id;
    }

    /** Sends the response of a server RPC that waits for one; false if there is no such RPC. */
    boolean respond(long now, InetSocketAddress client, long rpcId, ByteBuffer first, ByteBuffer[] parts,
                    int length) {
        return respond(now, client, rpcId, first, parts, null, length);
    }

    /** {@link #respond(long, InetSocketAddress, long, ByteBuffer, ByteBuffer[], int)}, or of {@code source} if not null. */
    boolean respond(long now, InetSocketAddress client, long rpcId, ByteBuffer first, ByteBuffer[] parts,
                    OutgoingPayload source, int length) {
        Objects.requireNonNull(client, "client");
        checkMessageLength("response", length);
        Rpc rpc = rpcs.serverRpc(client, rpcId);
        if (rpc == null || rpc.state != Rpc.State.SERVER_PROCESSING) {
            return false;
        }
        limits.checkOutgoingLength("response", length);
        limits.checkOutgoingRoom("response", length);
        rpc.state = Rpc.State.SERVER_RESPONDING;
        rpcs.heard(rpc); // the timer looks after it again, its silence counted from now
        outgoing.start(rpc, first, parts, source, length);
        clock.arm(now);
        return true;
    }

    /**
     * Ends a client RPC without an event; false if it is not live. A server that may hold the
     * request (some of it went out) is told with CANCEL, so that it drops it rather than run it
     * for nobody: a server RPC waiting for its handler exchanges no packets, so nothing else would
     * tell it. One small packet, never repeated: if it is lost, the server learns as before.
     */
    boolean abort(long rpcId) {
        Rpc rpc = rpcs.clientRpc(rpcId);
        if (rpc == null) {
            return false;
        }
        counters.bump(Counter.CLIENT_RPCS_ABORTED);
        if (rpc.out != null && (rpc.out.sent > 0 || rpc.out.zeroSent)) {
            control.bare(rpc.peer.address, PacketType.CANCEL, rpc.id, Counter.PACKETS_SENT_CANCEL);
        }
        rpcs.end(rpc);
        return true;
    }

    /** CANCEL from a client: its server RPC ends; the application hears of it if it holds the request. */
    void onCancel(InetSocketAddress from, long senderId) {
        Rpc rpc = rpcs.controlTarget(from, senderId);
        if (rpc == null) {
            counters.drop(rpcs.whyMissing(from, senderId));
            return;
        }
        if (rpc.client) {
            counters.drop(DropReason.WRONG_STATE); // only a client cancels
            return;
        }
        counters.bump(Counter.SERVER_RPCS_CANCELLED);
        if (rpc.state == Rpc.State.SERVER_PROCESSING) {
            events.cancelled(rpc.clientId(), rpc.peer.address);
        }
        rpc.endKnownToClient = true; // the client gave it up: a late copy of its request must not run it
        rpcs.end(rpc);
    }

    /** Ends a server RPC without telling its client; false if it is not live. */
    boolean abandon(InetSocketAddress client, long rpcId) {
        Rpc rpc = rpcs.serverRpc(client, rpcId);
        if (rpc == null) {
            return false;
        }
        counters.bump(Counter.SERVER_RPCS_ABANDONED);
        rpcs.end(rpc);
        return true;
    }

    /** Ends a server RPC that waits for its response and tells the client OVERLOADED; false if there is none. */
    boolean rejectOverloaded(InetSocketAddress client, long rpcId) {
        Rpc rpc = rpcs.serverRpc(client, rpcId);
        if (rpc == null || rpc.state != Rpc.State.SERVER_PROCESSING) {
            return false;
        }
        counters.bump(Counter.SERVER_RPCS_ABANDONED);
        control.bare(client, PacketType.OVERLOADED, rpc.id, Counter.PACKETS_SENT_OVERLOADED);
        rpc.endKnownToClient = true; // told it did not run: a late copy of the request must not run it now
        rpcs.end(rpc);
        return true;
    }

    private void checkMessageLength(String what, int length) {
        if (length > cfg.maxMessageLength) {
            throw new IllegalArgumentException(what + " of " + length
                    + " bytes exceeds maxMessageLength " + cfg.maxMessageLength);
        }
    }
}
