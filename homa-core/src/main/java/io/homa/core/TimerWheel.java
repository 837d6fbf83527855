package io.homa.core;

import java.util.Comparator;
import java.util.PriorityQueue;
import java.util.function.Consumer;

/**
 * Which live RPCs the timer visits on a tick, so that a tick costs what is due, not what is live.
 * Each live RPC is in one of four places ({@link Rpc.Schedule}):
 * <ul>
 *   <li>awake: on a list in age order, visited every tick. The timer keeps an RPC awake while it
 *       has something to do on every tick (we owe its peer data or grants, or it is due and waits
 *       for its peer's ration of timer packets), and from the tick its time comes;</li>
 *   <li>asleep: in a slot of a hashed timing wheel, until the tick before which the timer has
 *       nothing to do for it but count its silence ({@code RpcTimer#nextVisit});</li>
 *   <li>parked: the application is working on it; no tick until it answers;</li>
 *   <li>waking: taken out of sleep or parking since the last tick (a packet arrived, the
 *       application answered); back on the awake list at the next tick, at its age's place.</li>
 * </ul>
 * Every move costs O(1), except waking: woken RPCs wait in a heap (O(log n), no allocation once
 * it has grown) so that the next tick merges them into the awake list oldest first, the order in
 * which the timer rations its packets.
 */
final class TimerWheel {
    /** The order of creation: the timer serves the oldest RPC first. */
    static final Comparator<Rpc> BY_AGE = Comparator.comparingLong(r -> r.created);
    /**
     * Slots, a power of two: ticks of one revolution. An RPC due further ahead stays in its slot
     * and is passed over once per revolution (a silence of thousands of ticks is rare).
     */
    static final int SLOTS = 1024;
    private static final int MASK = SLOTS - 1;

    private final Rpc[] slots = new Rpc[SLOTS];
    private final PriorityQueue<Rpc> waking = new PriorityQueue<>(BY_AGE);
    /** Given each ended RPC once the wheel no longer refers to it (the table reuses the object). */
    private final Consumer<Rpc> released;
    private Rpc oldestAwake;
    private Rpc newestAwake;
    /** RPCs added so far: {@link Rpc#created}. */
    private long added;
    private int asleep;

    TimerWheel() {
        this(rpc -> { });
    }

    TimerWheel(Consumer<Rpc> released) {
        this.released = released;
    }

    /** A new RPC: awake, the youngest. */
    void add(Rpc rpc) {
        rpc.created = added++;
        rpc.schedule = Rpc.Schedule.AWAKE;
        linkAwake(rpc, newestAwake, null);
    }

    /**
     * An ended RPC leaves whatever place it has, and is {@link #released} at once, or, if it is
     * still waking (in the heap), when the next tick drops it from there.
     */
    void remove(Rpc rpc) {
        Rpc.Schedule was = rpc.schedule;
        switch (was) {
            case AWAKE -> unlinkAwake(rpc);
            case ASLEEP -> unlinkSlot(rpc);
            default -> { }
        }
        rpc.schedule = Rpc.Schedule.GONE;
        if (was != Rpc.Schedule.WAKING && was != Rpc.Schedule.GONE) {
            released.accept(rpc);
        }
    }

    /** An awake RPC the application works on: off the list until {@link #wake}. */
    void park(Rpc rpc) {
        unlinkAwake(rpc);
        rpc.schedule = Rpc.Schedule.PARKED;
    }

    /** An awake RPC the timer has nothing to do for before {@code tick} (later than the next). */
    void sleep(Rpc rpc, long tick) {
        unlinkAwake(rpc);
        rpc.schedule = Rpc.Schedule.ASLEEP;
        rpc.wakeTick = tick;
        int slot = (int) (tick & MASK);
        Rpc head = slots[slot];
        rpc.prev = null;
        rpc.next = head;
        if (head != null) {
            head.prev = rpc;
        }
        slots[slot] = rpc;
        asleep++;
    }

    /** Something happened to a sleeping or parked RPC: the timer looks at it on the next tick. */
    void wake(Rpc rpc) {
        switch (rpc.schedule) {
            case ASLEEP -> unlinkSlot(rpc);
            case PARKED -> { }
            default -> {
                return; // awake, waking already, or gone
            }
        }
        rpc.schedule = Rpc.Schedule.WAKING;
        waking.add(rpc);
    }

    /**
     * Starts tick {@code tick}: the RPCs due at it, and those woken since the last tick, join the
     * awake list at their age's place (walking it only as far as the youngest of them).
     *
     * @return the oldest awake RPC (follow {@link Rpc#next}), or null
     */
    Rpc startTick(long tick) {
        int slot = (int) (tick & MASK);
        Rpc rpc = slots[slot];
        while (rpc != null) {
            Rpc next = rpc.next;
            if (rpc.wakeTick <= tick) {
                wake(rpc);
            }
            rpc = next;
        }
        Rpc after = null; // the awake RPC the next woken one goes after: null for the head
        Rpc before = oldestAwake;
        for (Rpc woken = waking.poll(); woken != null; woken = waking.poll()) {
            if (woken.schedule != Rpc.Schedule.WAKING) {
                released.accept(woken); // ended meanwhile: only the heap still referred to it
                continue;
            }
            while (before != null && before.created < woken.created) {
                after = before;
                before = before.next;
            }
            woken.schedule = Rpc.Schedule.AWAKE;
            linkAwake(woken, after, before);
            after = woken;
        }
        return oldestAwake;
    }

    /** The oldest awake RPC, or null (introspection: the list as the last tick left it). */
    Rpc oldestAwake() {
        return oldestAwake;
    }

    /** RPCs asleep in the wheel. */
    int asleep() {
        return asleep;
    }

    private void linkAwake(Rpc rpc, Rpc after, Rpc before) {
        rpc.prev = after;
        rpc.next = before;
        if (after != null) {
            after.next = rpc;
        } else {
            oldestAwake = rpc;
        }
        if (before != null) {
            before.prev = rpc;
        } else {
            newestAwake = rpc;
        }
    }

    private void unlinkAwake(Rpc rpc) {
        if (rpc.prev != null) {
            rpc.prev.next = rpc.next;
        } else {
            oldestAwake = rpc.next;
        }
        if (rpc.next != null) {
            rpc.next.prev = rpc.prev;
        } else {
            newestAwake = rpc.prev;
        }
        rpc.prev = null;
        rpc.next = null;
    }

    private void unlinkSlot(Rpc rpc) {
        if (rpc.prev != null) {
            rpc.prev.next = rpc.next;
        } else {
            slots[(int) (rpc.wakeTick & MASK)] = rpc.next;
        }
        if (rpc.next != null) {
            rpc.next.prev = rpc.prev;
        }
        rpc.prev = null;
        rpc.next = null;
        asleep--;
    }
}
