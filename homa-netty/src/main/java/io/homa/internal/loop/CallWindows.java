package io.homa.internal.loop;

import io.homa.internal.rpc.ClientCall;

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
    /**
     * Windows kept while no call to their server is in flight, at most: a server called again
     * finds its window (no map entry or set made per call); beyond this many servers the idle
     * windows are forgotten.
     */
    private static final int MAX_IDLE = 1024;

    private static final class Window {
        int inFlight;
        /** Calls waiting, in arrival order; made when the first one has to wait. */
        LinkedHashSet<ClientCall<?>> waiting;

        boolean hasWaiting() {
            return waiting != null && !waiting.isEmpty();
        }
    }

    private final int limit;
    private final Map<InetSocketAddress, Window> windows = new HashMap<>();
    /** Windows with nothing in flight (they are kept, see {@link #MAX_IDLE}). */
    private int idle;

    CallWindows(int limit) {
        this.limit = limit;
    }

    /** Whether {@code c} may start now (it then counts as in flight); if not, it waits. */
    boolean admit(ClientCall<?> c) {
        if (limit == 0) {
            return true;
        }
        Window w = windows.get(c.server);
        if (w == null) {
            if (idle > MAX_IDLE) {
                forgetIdle();
            }
            w = new Window();
            windows.put(c.server, w);
        } else if (w.inFlight == 0) {
            idle--;
        }
        if (w.inFlight < limit && !w.hasWaiting()) {
            w.inFlight++;
            return true;
        }
        if (w.waiting == null) {
            w.waiting = new LinkedHashSet<>();
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
        if (w.hasWaiting()) {
            Iterator<ClientCall<?>> it = w.waiting.iterator();
            ClientCall<?> next = it.next();
            it.remove();
            return next; // takes over the slot
        }
        if (--w.inFlight == 0) {
            idle++;
        }
        return null;
    }

    /** Removes a waiting call (its deadline passed); false if it is not waiting. */
    boolean removeWaiting(ClientCall<?> c) {
        Window w = windows.get(c.server);
        return w != null && w.waiting != null && w.waiting.remove(c);
    }

    /** Hands every waiting call to {@code action} and forgets all windows. */
    void clear(Consumer<ClientCall<?>> action) {
        for (Window w : windows.values()) {
            if (w.waiting != null) {
                for (ClientCall<?> c : w.waiting) {
                    action.accept(c);
                }
            }
        }
        windows.clear();
        idle = 0;
    }

    private void forgetIdle() {
        windows.values().removeIf(w -> w.inFlight == 0);
        idle = 0;
    }
}
