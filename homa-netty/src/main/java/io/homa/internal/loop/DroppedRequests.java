package io.homa.internal.loop;

import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * Requests the server ended recently without answering them, remembered for a while so that a
 * copy the client sends again (its automatic retry) is not run: those it dropped (the handler
 * threw or did not reply in time, its reply was refused) or that run elsewhere (a TCP retry),
 * whose copies are dropped too; and those it refused unrun because their deadline passed in the
 * queue, whose copies are refused again. One dropped because no handler was set yet is not
 * remembered: nothing ran, and its retry may run once the socket serves. Entries expire after
 * {@code ttlNanos}; the set is bounded by the rate of drops times the TTL. Confined to one event loop.
 */
final class DroppedRequests {
    /** What {@link #lookup} knows of a request. */
    enum Kind {
        /** Not remembered. */
        NONE,
        /** Dropped (its handler may have run): drop a copy too. */
        DROPPED,
        /** Refused unrun (it expired): refuse a copy too. */
        REFUSED_UNRUN
    }

    private record Key(InetSocketAddress peer, long rpcId) {
    }

    private record Entry(Key key, long expiresAt) {
    }

    private final long ttlNanos;
    private final Map<Key, Kind> kinds = new HashMap<>();
    private final ArrayDeque<Entry> order = new ArrayDeque<>();

    DroppedRequests(long ttlNanos) {
        this.ttlNanos = ttlNanos;
    }

    /** Remembers a request dropped (or running elsewhere). */
    void add(long now, InetSocketAddress peer, long rpcId) {
        remember(now, peer, rpcId, Kind.DROPPED);
    }

    /** Remembers a request refused unrun. */
    void addRefusedUnrun(long now, InetSocketAddress peer, long rpcId) {
        remember(now, peer, rpcId, Kind.REFUSED_UNRUN);
    }

    /** Whether it is remembered at all. */
    boolean contains(long now, InetSocketAddress peer, long rpcId) {
        return lookup(now, peer, rpcId) != Kind.NONE;
    }

    /** What is remembered of the request ({@link Kind#NONE} if nothing). */
    Kind lookup(long now, InetSocketAddress peer, long rpcId) {
        expire(now);
        if (kinds.isEmpty()) {
            return Kind.NONE;
        }
        Kind kind = kinds.get(new Key(peer, rpcId));
        return kind == null ? Kind.NONE : kind;
    }

    private void remember(long now, InetSocketAddress peer, long rpcId, Kind kind) {
        expire(now);
        Key k = new Key(peer, rpcId);
        if (kinds.putIfAbsent(k, kind) == null) {
            order.add(new Entry(k, now + ttlNanos));
        }
    }

    private void expire(long now) {
        while (!order.isEmpty() && order.peek().expiresAt() - now <= 0) {
            kinds.remove(order.poll().key());
        }
    }
}
