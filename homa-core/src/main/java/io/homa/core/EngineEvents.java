package io.homa.core;

import java.net.InetSocketAddress;
import java.util.ArrayDeque;

/**
 * The engine's events waiting for {@link HomaEngine#pollEvent}, and the events its caller gave
 * back ({@link HomaEngine#recycle}) to be filled again: a caller that gives each one back makes the
 * engine allocate no event per message.
 */
final class EngineEvents {
    /** Events kept for reuse, at most (a drain seldom holds more at once). */
    private static final int MAX_SPARE = 64;

    private final ArrayDeque<EngineEvent> queue = new ArrayDeque<>();
    private final ArrayDeque<EngineEvent> spare = new ArrayDeque<>();

    void request(long clientId, InetSocketAddress peer, ReceivedMessage m, long deadline) {
        queue.add(take().set(EngineEvent.Kind.REQUEST, clientId, peer, m, null).deadline(deadline));
    }

    void cancelled(long clientId, InetSocketAddress peer) {
        queue.add(take().set(EngineEvent.Kind.CANCELLED, clientId, peer, null, null));
    }

    void response(long clientId, InetSocketAddress peer, ReceivedMessage m) {
        queue.add(take().set(EngineEvent.Kind.RESPONSE, clientId, peer, m, null));
    }

    void failed(long clientId, InetSocketAddress peer, RpcError error) {
        queue.add(take().set(EngineEvent.Kind.FAILED, clientId, peer, null, error));
    }

    EngineEvent poll() {
        return queue.poll();
    }

    boolean isEmpty() {
        return queue.isEmpty();
    }

    int size() {
        return queue.size();
    }

    /** Takes back an event its caller is done with (a second give-back of the same one is ignored). */
    void recycle(EngineEvent e) {
        if (e.recycled) {
            return;
        }
        e.set(null, 0, null, null, null);
        e.recycled = true;
        if (spare.size() < MAX_SPARE) {
            spare.add(e);
        }
    }

    private EngineEvent take() {
        EngineEvent e = spare.poll();
        if (e == null) {
            return new EngineEvent();
        }
        e.recycled = false;
        return e;
    }
}
