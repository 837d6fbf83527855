package io.homa.internal.rpc;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * A socket's calls in flight, so that closing it can fail every call nobody completed, and the
 * token that decides who completes a call: whoever {@link #forget}s it first. Any thread.
 *
 * <p>A lock-free stack threaded through the calls themselves: adding is one compare-and-set on
 * its head and no object (a concurrent set's node was 32 B per call, and its removal a lock
 * that the loops and the callers took in turn). A call is never unlinked when it ends, only
 * marked. A purge takes the stack off, drops the ended calls and puts the rest back; it runs when
 * an add finds the stack grown past the calls live at the last purge plus a slack (half of them,
 * at least {@value #MIN_SLACK}), or when that slack of calls have ended since the last purge. So
 * the stack holds the live calls and about that slack of ended ones (an ended call keeps its
 * request and response reachable), also once the socket goes quiet after a burst, and a purge
 * costs a few visits per add or end.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class CallsInFlight {
    private static final int MIN_SLACK = 8;

    private final AtomicReference<ClientCall<?>> head = new AtomicReference<>();
    /** The depth at which an add purges. */
    private volatile int purgeAt = MIN_SLACK;
    /** How many ended calls make a purge: the slack of the last purge. */
    private volatile int slack = MIN_SLACK;
    /** Calls ended since the last purge began. */
    private final AtomicInteger endedSincePurge = new AtomicInteger();
    /** What {@link #close} does to each live call; null while open. */
    private volatile Consumer<ClientCall<?>> onClose;

    /** Adds a call that was not added before. */
    public void add(ClientCall<?> c) {
        ClientCall<?> h;
        do {
            h = head.get();
            c.nextInFlight = h;
            c.depthInFlight = h == null ? 1 : h.depthInFlight + 1;
        } while (!head.compareAndSet(h, c));
        if (c.depthInFlight >= purgeAt) {
            purge();
        }
    }

    /** Ends {@code c}'s time in flight; true for exactly one caller, the one to complete it. */
    public boolean forget(ClientCall<?> c) {
        if (!c.markForgotten()) {
            return false;
        }
        if (endedSincePurge.incrementAndGet() >= slack) {
            purge();
        }
        return true;
    }

    /** Whether nobody {@link #forget}s {@code c} yet. */
    public boolean contains(ClientCall<?> c) {
        return !c.forgotten();
    }

    /**
     * Hands every call still in flight to {@code action}, now and whenever a purge running
     * meanwhile puts calls back; {@code action} must forget a call before completing it (a call
     * may be handed over twice).
     */
    public void close(Consumer<ClientCall<?>> action) {
        onClose = action;
        drain(action);
    }

    /** How many calls the stack links now, ended ones included (for tests; not while others add). */
    int linked() {
        int n = 0;
        for (ClientCall<?> c = head.get(); c != null; c = c.nextInFlight) {
            n++;
        }
        return n;
    }

    private void drain(Consumer<ClientCall<?>> action) {
        for (ClientCall<?> c = head.getAndSet(null); c != null; ) {
            ClientCall<?> next = c.nextInFlight;
            c.nextInFlight = null;
            if (!c.forgotten()) {
                action.accept(c);
            }
            c = next;
        }
    }

    /** Takes the stack off, keeps its live calls and puts them back on top of what was added meanwhile. */
    private void purge() {
        endedSincePurge.set(0);
        ClientCall<?> first = null;
        ClientCall<?> last = null;
        int live = 0;
        for (ClientCall<?> c = head.getAndSet(null); c != null; ) {
            ClientCall<?> next = c.nextInFlight;
            c.nextInFlight = null;
            if (!c.forgotten()) {
                if (last == null) {
                    first = c;
                } else {
                    last.nextInFlight = c;
                }
                last = c;
                live++;
            }
            c = next;
        }
        int s = Math.max(MIN_SLACK, live / 2);
        slack = s;
        purgeAt = live + s;
        if (first != null) {
            ClientCall<?> h;
            do {
                h = head.get();
                last.nextInFlight = h;
                int depth = (h == null ? 0 : h.depthInFlight) + live;
                for (ClientCall<?> c = first; c != h; c = c.nextInFlight) {
                    c.depthInFlight = depth--;
                }
            } while (!head.compareAndSet(h, first));
        }
        Consumer<ClientCall<?>> closing = onClose;
        if (closing != null) { // closed while we held calls it could not see: hand them over now
            drain(closing);
        }
    }
}
