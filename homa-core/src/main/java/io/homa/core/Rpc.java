package io.homa.core;

/**
 * One RPC as one side sees it. A client RPC sends a request and receives a response; a server
 * RPC receives a request and sends a response. {@link #id} is this side's id: even on the
 * client, {@code clientId ^ 1} on the server, as in Linux Homa.
 */
final class Rpc {
    enum State {
        /** Client: request going out and/or response coming in. */
        CLIENT_ACTIVE,
        /** Server: the request is arriving. */
        SERVER_RECEIVING,
        /** Server: the request was delivered; waiting for the application's response. */
        SERVER_PROCESSING,
        /** Server: the response is going out. */
        SERVER_RESPONDING,
        /** Server: the response is all sent; waiting for the client's ACK. */
        SERVER_AWAITING_ACK,
        /** Freed: no longer in any table. */
        DEAD
    }

    long id;
    Peer peer;
    boolean client;
    State state;
    OutgoingMessage out;
    IncomingMessage in;
    /** Ticks since a packet for this RPC last arrived. */
    int silentTicks;
    /** Ticks spent waiting for our own grants (the sender hears BUSY now and then). */
    int waitTicks;
    /** Server: the length of the request, kept once it is delivered (it bounds a blind response). */
    int requestLength;
    /** Client: times the request restarted after RPC_UNKNOWN. */
    int restarts;
    /** Tick of this RPC's last RESEND (or NEED_ACK), for the per-RPC interval. */
    long lastAskTick;
    /** Client: the server has sent something about this RPC (so it knows the request exists). */
    boolean heard;
    /** RESENDs (or NEED_ACKs) sent since the RPC last made progress; each doubles the next interval. */
    int asks;
    /** Client: when the request's last byte went out (ns), valid while {@link #timingRoundTrip}. */
    long requestSentAt;
    /** Client: the request went out once, unrepeated, so its response measures the round trip. */
    boolean timingRoundTrip;
    /** Client: part of the request was retransmitted, so its response measures nothing. */
    boolean roundTripSpoiled;
    /** When the RPC started (the engine's clock, ns), for {@link HomaEngine#rpcs}. */
    long startedAt;
    /** Neighbours in the engine's list of live RPCs, oldest first (the timer scans in age order). */
    Rpc olderLive;
    Rpc newerLive;
    /** Place in the order of creation, which the live list keeps. */
    long created;
    /** Server: taken off the live list while the application works on it (see {@code RpcTable#park}). */
    boolean parked;
    /** In the table's list of RPCs to relink at the next tick (see {@code RpcTable#unpark}). */
    boolean unparking;

    Rpc(long id, Peer peer, boolean client) {
        init(id, peer, client);
    }

    /**
     * Makes this a new RPC, every field as the constructor leaves it: the table reuses the objects
     * of ended RPCs. (RpcReuseTest checks that no field is forgotten here.)
     */
    Rpc init(long id, Peer peer, boolean client) {
        this.id = id;
        this.peer = peer;
        this.client = client;
        this.state = client ? State.CLIENT_ACTIVE : State.SERVER_RECEIVING;
        out = null;
        in = null;
        silentTicks = 0;
        waitTicks = 0;
        requestLength = 0;
        restarts = 0;
        lastAskTick = Long.MIN_VALUE / 2;
        heard = false;
        asks = 0;
        requestSentAt = 0;
        timingRoundTrip = false;
        roundTripSpoiled = false;
        startedAt = 0;
        olderLive = null;
        newerLive = null;
        created = 0;
        parked = false;
        unparking = false;
        return this;
    }

    /** The client's id of this RPC (even), used in events, acks and server tables. */
    long clientId() {
        return client ? id : id ^ 1;
    }

    @Override
    public String toString() {
        return (client ? "client" : "server") + " rpc " + id + " " + state + " peer " + peer.address;
    }
}
