package io.homa.core;

import io.homa.core.wire.DecodedPacket;
import io.homa.core.wire.DropReason;
import io.homa.core.wire.WireFormat;

import java.net.InetSocketAddress;

/**
 * Acknowledgements (Linux Homa's acks, homa_peer.c and homa_incoming.c). A client that has a
 * whole response owes its server an ack, so that the server may forget the RPC and its response:
 * the ack rides on the next DATA packet to that server, or goes in an ACK packet once it has
 * waited {@code ackDelayTicks} or a packet's worth ({@code MAX_ACKS}) are owed, or at once when
 * the server asks with NEED_ACK. The server frees the RPC when the ack arrives.
 */
final class Acks {
    private final EngineConfig cfg;
    private final EngineCounters counters;
    private final TickClock clock;
    private final RpcTable rpcs;
    private final ControlPackets control;
    private final long[] ackIds = new long[WireFormat.MAX_ACKS];
    private final int[] ackPorts = new int[WireFormat.MAX_ACKS];

    Acks(EngineConfig cfg, EngineCounters counters, TickClock clock, RpcTable rpcs, ControlPackets control) {
        this.cfg = cfg;
        this.counters = counters;
        this.clock = clock;
        this.rpcs = rpcs;
        this.control = control;
    }

    // ------------------------------------------------------------------ client side

    /** We finished client RPC {@code id} to {@code p}: its server may forget it once told. */
    void owe(Peer p, long id) {
        if (p.pendingAcks.isEmpty()) {
            p.oldestAckTick = clock.tick();
        }
        p.pendingAcks.add(id);
        if (p.pendingAcks.size() >= WireFormat.MAX_ACKS) {
            flush(p); // a full ACK packet is worth sending now
        }
    }

    /** One ack we owe the DATA packet's destination, to ride in its header, or 0. */
    long piggyback(Peer p) {
        if (p.pendingAcks.isEmpty()) {
            return 0;
        }
        counters.bump(Counter.ACKS_PIGGYBACKED);
        return p.pendingAcks.poll();
    }

    /** On a tick: sends the acks owed to {@code p} if no DATA carried them within ackDelayTicks. */
    void flushIfDue(Peer p) {
        if (!p.pendingAcks.isEmpty() && clock.tick() - p.oldestAckTick >= cfg.ackDelayTicks) {
            flush(p);
        }
    }

    private void flush(Peer p) {
        while (!p.pendingAcks.isEmpty()) {
            int n = 0;
            while (n < WireFormat.MAX_ACKS && !p.pendingAcks.isEmpty()) {
                ackIds[n++] = p.pendingAcks.poll();
            }
            control.ack(p.address, ackIds, ackPorts, n);
        }
    }

    /** A server asks whether we have the response of our client RPC named by {@code senderId}. */
    void onNeedAck(InetSocketAddress from, long senderId) {
        if (RpcIds.isClientId(senderId)) {
            counters.drop(DropReason.WRONG_STATE); // only a server asks for acks
            return;
        }
        long clientId = senderId ^ 1;
        Rpc rpc = rpcs.clientRpc(clientId);
        if (rpc != null) {
            if (!rpc.peer.address.equals(from)) {
                counters.drop(DropReason.WRONG_PEER);
                return;
            }
            // Not finished here: no ACK yet. The server is alive, but the response may still be
            // queued in the network, so asking for it again now would only duplicate it; our own
            // timer asks if it stays missing.
            rpc.peer.heardTick = clock.tick();
            return;
        }
        // Finished (or aborted) here: acknowledge it, with whatever else we owe this peer.
        Peer peer = rpcs.peer(from);
        int n = 0;
        ackIds[n++] = clientId;
        if (peer != null) {
            while (n < WireFormat.MAX_ACKS && !peer.pendingAcks.isEmpty()) {
                long id = peer.pendingAcks.poll();
                if (id != clientId) {
                    ackIds[n++] = id;
                }
            }
        }
        control.ack(from, ackIds, ackPorts, n);
    }

    // ------------------------------------------------------------------ server side

    /** An ACK packet: each entry frees a finished server RPC. */
    void onAck(InetSocketAddress from, DecodedPacket p) {
        for (int i = 0; i < p.ackCount; i++) {
            acknowledged(from, p.ackIds[i]);
        }
    }

    /** The client acknowledged {@code clientId}: free the finished server RPC. */
    void acknowledged(InetSocketAddress from, long clientId) {
        Rpc rpc = rpcs.serverRpc(from, clientId);
        if (rpc != null && (rpc.state == Rpc.State.SERVER_AWAITING_ACK || rpc.state == Rpc.State.SERVER_RESPONDING)) {
            counters.bump(Counter.SERVER_RPCS_COMPLETED);
            rpc.state = Rpc.State.SERVER_AWAITING_ACK;
            rpc.endKnownToClient = true;
            rpcs.end(rpc);
        }
    }
}
