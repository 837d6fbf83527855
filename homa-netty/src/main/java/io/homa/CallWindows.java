package io.homa;

import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Admission control for calls: at most {@code limit} calls per server are in the engine at once
 * (per engine); later ones wait here, in arrival order, until one ends. Without it, a burst of
 * thousands of calls to one busy server leaves thousands of RPCs waiting, and the engine's
 * per-RPC timers then send a RESEND per RPC every few ticks (answered by BUSY) and a NEED_ACK per
 * answered RPC every tick: a storm that can take more CPU than the work itself and make the
 * server's socket drop the very packets that would end it. A limit of 0 means none. Confined to
 * one event loop.
 */
final class CallWindows {
    private static final class Window {
        int inFlight;
        final LinkedHashSet<ClientCall<?>> waiting = new LinkedHashSet<>();
    }

    private final int limit;
    private final Map<InetSocketAddress, Window> windows = new HashMap<>();

    CallWindows(int limit) {
        this.limit = limit;
    }

    /** Whether {@code c} may start now (it then counts as in flight); if not, it waits. */
    boolean admit(ClientCall<?> c) {
        if (limit == 0) {
            return true;
        }
        Window w = windows.computeIfAbsent(c.server, k -> new Window());
        if (w.inFlight < limit && w.waiting.isEmpty()) {
            w.inFlight++;
            return true;
        }
        w.waiting.add(c);
        return false;
    }

    /**
     * A call to {@code server} that was in flight ended. Returns the next waiting call, now
     * counted as in flight in its place, or null.
     */
    ClientCall<?> release(InetSocketAddress server) {
        if (limit == 0) {
            return null;
        }
        Window w = windows.get(server);
        if (w == null) {
            return null;
        }
        Iterator<ClientCall<?>> it = w.waiting.iterator();
        if (it.hasNext()) {
            ClientCall<?> next = it.next();
            it.remove();
            return next; // takes over the slot
        }
        if (--w.inFlight == 0) {
            windows.remove(server);
        }
        return null;
    }

    /** Removes a waiting call (its deadline passed); false if it is not waiting. */
    boolean removeWaiting(ClientCall<?> c) {
        Window w = windows.get(c.server);
        return w != null && w.waiting.remove(c);
    }

    /** Hands every waiting call to {@code action} and forgets all windows. */
    void clear(Consumer<ClientCall<?>> action) {
        for (Window w : windows.values()) {
            for (ClientCall<?> c : w.waiting) {
                action.accept(c);
            }
        }
        windows.clear();
    }
}
