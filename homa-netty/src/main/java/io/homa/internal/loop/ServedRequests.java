package io.homa.internal.loop;

import io.homa.core.EngineConfig;
import io.homa.core.EngineEvent;
import io.homa.core.ReceivedMessage;
import io.homa.core.RpcError;
import io.homa.internal.observe.ShellCounter;
import io.homa.internal.rpc.InboundRequest;
import io.homa.internal.rpc.RequestHandler;
import io.netty.buffer.ByteBuf;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.collection.LongObjectHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The server side of one engine loop: hands the engine's REQUEST events to the handler (within
 * the socket's queue bound, else refused as OVERLOADED), keeps every request a handler has until
 * it is answered, dropped or timed out, and sends the replies. It is the {@link InboundRequest.Path}
 * of the requests received here. Runs on the loop unless a method says otherwise.
 */
final class ServedRequests implements InboundRequest.Path {
    private static final Logger log = LoggerFactory.getLogger(ServedRequests.class);

    private final EngineLoop l;
    private final long requestTimeoutNanos;
    /** Requests dropped or refused recently, so that their clients' automatic retries are not run. */
    private final DroppedRequests dropped;
    /**
     * The tracked requests (handed to the handler, not yet answered or dropped) by RPC id: several
     * clients may use one id, and {@link InboundRequest#sameId} chains them. All of them are
     * dropped at close.
     */
    private final LongObjectHashMap<InboundRequest> byId = new LongObjectHashMap<>();
    /** Counts a request whose handler never ran (one object, not one per request). */
    private final Runnable countSkipped;

    ServedRequests(EngineLoop loop, Duration requestTimeout) {
        this.l = loop;
        this.requestTimeoutNanos = requestTimeout.toNanos();
        EngineConfig ec = loop.engineConfig;
        long retryWindow = (ec.maxRestarts + 1L) * ec.timeoutTicks * ec.tickNanos;
        this.dropped = new DroppedRequests(Math.max(TimeUnit.SECONDS.toNanos(1), retryWindow));
        this.countSkipped = () -> loop.count(ShellCounter.REQUESTS_SKIPPED);
    }

    // ------------------------------------------------------------------ InboundRequest.Path

    @Override
    public int maxReplyLength() {
        return l.engineConfig.maxMessageLength;
    }

    /** Over Homa a peer is verified by its keys: the TLS session of the key exchange (mutual TLS), else null. */
    @Override
    public javax.net.ssl.SSLSession tlsSessionOf(InetSocketAddress peer) {
        return l.socket.tlsSession(peer);
    }

    /**
     * Sends a reply (any thread): at once from an inline handler, else as a command (which the
     * handler's thread runs itself when the engine is free: no hand-off).
     */
    @Override
    public void reply(InboundRequest r, byte[] bytes, ByteBuf owner) {
        if (l.inEngine()) {
            respond(r, bytes, owner); // an inline handler: no lambda
        } else {
            l.runOnLoop(() -> respond(r, bytes, owner));
        }
    }

    @Override
    public void dropRequest(InboundRequest r, String why) {
        if (r.markDropped()) {
            l.runOnLoop(() -> dropOnLoop(r, why, ShellCounter.REQUESTS_DROPPED, true));
        }
    }

    @Override
    public void expireRequest(InboundRequest r) {
        if (r.markDropped()) {
            l.runOnLoop(() -> expireOnLoop(r));
        }
    }

    @Override
    public void shedRequest(InboundRequest r, long waitedNanos) {
        if (r.markDropped()) {
            l.runOnLoop(() -> shedOnLoop(r));
        }
    }

    @Override
    public void skippedRequest(InboundRequest r) {
        l.runOnLoop(countSkipped);
    }

    @Override
    public boolean isClosed() {
        return l.isClosed();
    }

    // ------------------------------------------------------------------ requests in

    /** The engine's REQUEST event: to the handler, or dropped, or refused as overloaded. */
    void onRequest(EngineEvent e) {
        long now = System.nanoTime();
        if (l.fallback != null) {
            l.fallback.delivered(now, e.peer(), e.rpcId());
        }
        RequestHandler handler = l.socket.handler();
        DroppedRequests.Kind before = dropped.lookup(now, e.peer(), e.rpcId());
        // A request a handler thread takes from the queue waits there, and its handler may hold it
        // to answer later: it must not hold its datagram's whole read buffer meanwhile. An inline
        // handler runs now, on this loop (no copy: the small call's allocation stays as it was),
        // and a request dropped below is released at once.
        boolean queued = !l.dispatcher.inline() && handler != null && before != DroppedRequests.Kind.REFUSED_UNRUN
                && before != DroppedRequests.Kind.DROPPED;
        ReceivedMessage message = queued ? l.detached(e.message()) : e.message();
        InboundRequest r = l.socket.requests().create(this, e.rpcId(), e.peer(), message);
        if (before == DroppedRequests.Kind.REFUSED_UNRUN) {
            // A copy of a request refused as expired (the refusal was lost, and the client sent
            // it again): refused again, so its caller learns it did not run rather than hearing
            // nothing and sending it again until its own deadline.
            r.markDropped();
            l.count(ShellCounter.REQUESTS_DROPPED);
            l.engine.rejectOverloaded(now, e.peer(), e.rpcId());
            l.drain();
            return;
        }
        if (before == DroppedRequests.Kind.DROPPED) {
            r.markDropped();
            dropOnLoop(r, "dropped before, retried", ShellCounter.REQUESTS_DROPPED, true);
            return;
        }
        if (handler == null) {
            // Not remembered: no code of the application saw it, so the copy its client sends
            // again may run once serve() is called (a server that opens its socket a moment
            // before it serves would otherwise refuse the retried calls of its first moment for
            // the whole retry window: idempotent ones failed as unknown after all their restarts).
            r.markDropped();
            dropOnLoop(r, "no handler is set (serve() not called)", ShellCounter.REQUESTS_DROPPED, false);
            return;
        }
        // The caller's deadline, if it sent one and it comes before the server's own timeout.
        long deadline = now + requestTimeoutNanos;
        if (e.deadline() != 0) {
            long callers = e.deadline() - deadlineGuard(e.deadline() - now, l.recentLagNanos());
            if (callers - deadline < 0) {
                deadline = callers;
            }
        }
        r.deadline = deadline;
        track(r);
        l.deadlines.add(r);
        if (!l.dispatcher.submit(handler, r, now)) {
            l.deadlines.remove(r);
            untrack(r);
            refuseOverloaded(now, r);
            return;
        }
        l.count(ShellCounter.REQUESTS_HANDLED);
    }

    /**
     * How much earlier than the engine says the server takes a caller's deadline to be: the engine
     * adds the time left, as the client sent it, to when it read the request's first packet, which
     * is later than when the client sent it by the way there and by the time the datagram waited
     * in the socket for a busy loop. 1 ms, or 2% of the time left (at most 100 ms), or twice how
     * late this loop's timer has fired recently, whichever is most: so a handler does not start for
     * a caller whose own clock has just run out.
     */
    static long deadlineGuard(long leftNanos, long loopLagNanos) {
        long guard = Math.min(TimeUnit.MILLISECONDS.toNanos(100), Math.max(TimeUnit.MILLISECONDS.toNanos(1), leftNanos / 50));
        return Math.max(guard, 2 * loopLagNanos);
    }

    /** The engine's CANCELLED event: the client gave up a request we hold; its RPC is gone already. */
    void onCancelled(EngineEvent e) {
        for (InboundRequest r = byId.get(e.rpcId()); r != null; r = r.sameId) {
            if (r.peer().equals(e.peer())) {
                if (r.markDropped()) { // unanswered: the handler will not start, a late reply is discarded
                    l.deadlines.remove(r);
                    untrack(r);
                    l.count(ShellCounter.REQUESTS_CANCELLED);
                    log.debug("{} cancelled by its client", r);
                }
                return;
            }
        }
    }

    /**
     * Refuses a request whose time ran out while it waited, unrun: the client is told OVERLOADED
     * (on the loop). Its caller may still be waiting: the server takes a caller's deadline to be a
     * little earlier than the caller does ({@link #deadlineGuard}), and its own request timeout
     * may be shorter. Dropped without a word, the request looked lost to that caller, whose
     * engine asked for it again, heard RPC_UNKNOWN and sent it anew until its own deadline (up to
     * 5,600 such restarts in a cold flood of 10 ms handlers), work an overloaded server had no
     * time for, ending in a timeout instead of a refusal. Remembered as well: should the refusal be
     * lost, a copy sent again is refused again, not queued anew.
     */
    private void expireOnLoop(InboundRequest r) {
        l.deadlines.remove(r);
        if (l.isClosed()) {
            return;
        }
        untrack(r);
        long now = System.nanoTime();
        log.debug("{} refused: its deadline passed while it waited", r);
        l.count(ShellCounter.REQUESTS_EXPIRED);
        dropped.addRefusedUnrun(now, r.peer(), r.rpcId);
        l.engine.rejectOverloaded(now, r.peer(), r.rpcId);
        l.drain();
    }

    /** Refuses a queued request unrun, shed by the queue: the client is told OVERLOADED (on the loop). */
    private void shedOnLoop(InboundRequest r) {
        l.deadlines.remove(r);
        if (l.isClosed()) {
            return;
        }
        untrack(r);
        l.count(ShellCounter.REQUESTS_SHED);
        l.engine.rejectOverloaded(System.nanoTime(), r.peer(), r.rpcId);
        l.drain();
    }

    /**
     * Refuses a request without running its handler: the queue of requests waiting for one is
     * full. The engine frees the RPC and tells the client with an OVERLOADED packet, on which the
     * client's engine fails the call ({@link RpcError#OVERLOADED}). The request is not remembered
     * as dropped: should the packet be lost, the client's retry is judged afresh.
     */
    private void refuseOverloaded(long now, InboundRequest r) {
        r.markDropped();
        l.count(ShellCounter.REQUESTS_OVERLOADED);
        log.debug("{} refused: {} requests wait for the handler already", r, l.socket.config.maxQueuedRequests());
        l.engine.rejectOverloaded(now, r.peer(), r.rpcId);
    }

    /** Remembers that {@code client}'s RPC {@code rpcId} runs elsewhere (a TCP retry), so a Homa copy is dropped. */
    void claimedElsewhere(long now, InetSocketAddress client, long rpcId) {
        dropped.add(now, client, rpcId);
    }

    // ------------------------------------------------------------------ answers out

    private void respond(InboundRequest r, byte[] bytes, ByteBuf owner) {
        l.deadlines.remove(r);
        if (l.isClosed()) {
            ReferenceCountUtil.safeRelease(owner);
            return;
        }
        untrack(r);
        r.replyWith(bytes, owner); // the engine reads the reply from the request object, in place
        boolean sent = false;
        RuntimeException refused = null;
        try {
            sent = l.engine.respond(System.nanoTime(), r.peer(), r.rpcId, r);
        } catch (RuntimeException e) { // a limit of the engine (e.g. its outgoing bytes)
            refused = e;
        }
        if (sent) {
            l.count(ShellCounter.REQUESTS_REPLIED);
        } else {
            r.releasePayload();
            if (refused == null) {
                log.debug("reply to {} discarded: the RPC is gone (client aborted or vanished)", r);
            } else {
                log.warn("reply to {} refused by the engine: {}; the request is dropped", r, refused.getMessage());
                dropOnLoop(r, "its reply was refused: " + refused.getMessage(), ShellCounter.REQUESTS_DROPPED, true);
                return;
            }
        }
        l.drain();
    }

    /**
     * Drops a request, counted as {@code counter}: the engine frees its server RPC (counted as
     * SERVER_RPCS_ABANDONED), and the client learns of it when it next asks (RPC_UNKNOWN, and its
     * request restarts). With {@code remember}, the copies it sends again are dropped too while it
     * is remembered here: its handler ran, or its time is up.
     */
    private void dropOnLoop(InboundRequest r, String why, ShellCounter counter, boolean remember) {
        l.deadlines.remove(r);
        if (l.isClosed()) {
            return;
        }
        untrack(r);
        long now = System.nanoTime();
        log.debug("{} dropped: {}", r, why);
        l.count(counter);
        if (remember) {
            dropped.add(now, r.peer(), r.rpcId);
        }
        l.engine.abandon(now, r.peer(), r.rpcId);
        l.drain();
    }

    // ------------------------------------------------------------------ the open requests

    /** {@code r} went to its handler: it must be answered or dropped, at the latest at close. */
    private void track(InboundRequest r) {
        r.sameId = byId.put(r.rpcId, r);
    }

    /**
     * {@code r} was answered or dropped: out of the table (a no-op if it was never tracked, or was
     * already untracked: it is then not in its id's chain).
     */
    private void untrack(InboundRequest r) {
        InboundRequest head = byId.get(r.rpcId);
        if (head == r) {
            if (r.sameId == null) {
                byId.remove(r.rpcId);
            } else {
                byId.put(r.rpcId, r.sameId);
            }
        } else {
            InboundRequest q = head;
            while (q != null && q.sameId != r) {
                q = q.sameId;
            }
            if (q == null) {
                return; // not tracked
            }
            q.sameId = r.sameId;
        }
        r.sameId = null;
    }

    /** Drops every request still open (close): its bytes are released, a late reply is discarded. */
    void close() {
        List<InboundRequest> open = new ArrayList<>();
        for (InboundRequest head : byId.values()) {
            for (InboundRequest r = head; r != null; r = r.sameId) {
                open.add(r);
            }
        }
        byId.clear();
        for (InboundRequest r : open) {
            r.sameId = null;
            r.markDropped();
        }
    }
}
