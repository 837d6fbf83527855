package io.homa.core;

/**
 * One RPC as one side sees it. A client RPC sends a request and receives a response; a server
 * RPC receives a request and sends a response. {@link #id} is this side's id: even on the
 * client, {@code clientId ^ 1} on the server, as in Linux Homa.
 *
 * <p>The engine reuses the object of an ended RPC for a new one ({@link #init}, see
 * {@link RpcTable}): nothing may keep a reference to an RPC past its end.
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

    /** Where the timer keeps the RPC (see {@link TimerWheel}). */
    enum Schedule { AWAKE, ASLEEP, PARKED, WAKING, GONE }

    long id;
    Peer peer;
    boolean client;
    State state;
    OutgoingMessage out;
    IncomingMessage in;
    /**
     * The tick of the RPC's last sign of life (a packet for it, or a tick at which we owed its peer
     * data or grants): its silence is the ticks since.
     */
    long silentSince;
    /** Ticks spent waiting for our own grants (the sender hears BUSY now and then). */
    int waitTicks;
    /** Server: the length of the request, kept once it is delivered (it bounds a blind response). */
    int requestLength;
    /** Client: times the request restarted after RPC_UNKNOWN. */
    int restarts;
    /**
     * Client: the request may run more than once, so it is sent again whenever the server no
     * longer knows it (else only when the server provably never had it whole).
     */
    boolean idempotent;
    /** Client: the response is assembled in one heap array (see {@link OutgoingPayload#responseAsArray()}). */
    boolean responseAsArray;
    /**
     * Server: the client knows how the RPC ended: it acknowledged the response, cancelled the
     * call, or was told OVERLOADED (a late duplicate of the id is then remembered only briefly).
     */
    boolean endKnownToClient;
    /**
     * Client: when the whole request first went out (ns; any copy, restarts included), valid once
     * {@link #wholeRequestSent}. A server incarnation younger than this may be one that replaced a
     * server which received it.
     */
    long wholeRequestSentAt;
    boolean wholeRequestSent;
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
    /**
     * The request's deadline on this engine's clock (ns), or 0 for none. Client: as the application
     * gave it, sent in every request DATA packet as the time left. Server: when the first packet
     * of the request arrived plus the time left it carried.
     */
    long deadline;
    /** When the RPC started (the engine's clock, ns), for {@link HomaEngine#rpcs}. */
    long startedAt;
    /** Where the timer keeps it, and until when if asleep (see {@link TimerWheel}). */
    Schedule schedule;
    long wakeTick;
    /** Neighbours on the timer's awake list (oldest first) or in the wheel slot it sleeps in. */
    Rpc prev;
    Rpc next;
    /** Place in the order of creation, which the timer's awake list keeps. */
    long created;

    Rpc(long id, Peer peer, boolean client) {
        init(id, peer, client);
    }

    /** Makes this object a new RPC: every field as the constructor leaves it. */
    Rpc init(long id, Peer peer, boolean client) {
        this.id = id;
        this.peer = peer;
        this.client = client;
        state = client ? State.CLIENT_ACTIVE : State.SERVER_RECEIVING;
        out = null;
        in = null;
        silentSince = 0;
        waitTicks = 0;
        requestLength = 0;
        restarts = 0;
        idempotent = false;
        responseAsArray = false;
        endKnownToClient = false;
        wholeRequestSentAt = 0;
        wholeRequestSent = false;
        lastAskTick = Long.MIN_VALUE / 2;
        heard = false;
        asks = 0;
        requestSentAt = 0;
        timingRoundTrip = false;
        roundTripSpoiled = false;
        deadline = 0;
        startedAt = 0;
        schedule = null;
        wakeTick = 0;
        prev = null;
        next = null;
        created = 0;
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
