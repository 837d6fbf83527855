package io.homa.internal.loop;

import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.Set;

/**
 * Requests the server dropped recently (the handler threw or did not reply in time, its reply was
 * refused) or that run elsewhere (a TCP retry), remembered for a while so that the client's
 * automatic retries of the same RPC are dropped too instead of running the handler again; or, in
 * a set of their own, requests refused because their deadline passed in the queue, whose copies
 * sent again are refused again. One dropped because no handler was set yet is not remembered:
 * nothing ran, and its retry may run once the socket serves. Entries expire after
 * {@code ttlNanos}; the set is bounded by the rate of drops times the TTL. Confined to one event loop.
 */
final class DroppedRequests {
    private record Key(InetSocketAddress peer, long rpcId) {
    }

    private record Entry(Key key, long expiresAt) {
    }

    private final long ttlNanos;
    private final Set<Key> keys = new HashSet<>();
    private final ArrayDeque<Entry> order = new ArrayDeque<>();

    DroppedRequests(long ttlNanos) {
        this.ttlNanos = ttlNanos;
    }

    void add(long now, InetSocketAddress peer, long rpcId) {
        expire(now);
        Key k = new Key(peer, rpcId);
        if (keys.add(k)) {
            order.add(new Entry(k, now + ttlNanos));
        }
    }

    boolean contains(long now, InetSocketAddress peer, long rpcId) {
        expire(now);
        return !keys.isEmpty() && keys.contains(new Key(peer, rpcId));
    }

    private void expire(long now) {
        while (!order.isEmpty() && order.peek().expiresAt() - now <= 0) {
            keys.remove(order.poll().key());
        }
    }
}
