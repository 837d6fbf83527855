package io.homa.internal.rpc;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

/**
 * The deadlines of one event loop's calls and requests: a binary heap whose entries keep their own
 * place in it, and one Netty timer for the earliest. A call or request costs no object here (no
 * scheduled task, no lambda), where a timer of its own would cost both; removing one does not
 * touch the timer, which, when it fires early, only arms itself again for the new earliest. The
 * timer is re-armed on adding only when the new deadline is earlier than the armed one, so with
 * the usual equal deadlines it fires about once per deadline's length. Used under its loop's
 * engine lock (by the loop, or by a caller in a turn of its own), which the timer takes too.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class DeadlineQueue {
    /** Something that expires: a call's deadline, a request's timeout. */
    public interface Entry {
        /** When it expires ({@link System#nanoTime()} value); fixed while queued. */
        long deadlineNanos();

        /** Its place in the heap, or -1 when not queued (kept by the queue, 0 for a new entry is fine). */
        int deadlineSlot();

        void deadlineSlot(int slot);

        /** The deadline passed: it has just left the queue. Runs on the loop; may add or remove entries. */
        void deadlinePassed();
    }

    private final EventLoop loop;
    /** Held while the queue is used: the engine lock of the loop it belongs to. */
    private final Lock guard;
    private final Runnable fire = this::fireLocked;
    private Entry[] heap = new Entry[16];
    private int size;
    private ScheduledFuture<?> timer;
    /** When {@link #timer} fires, or {@link Long#MAX_VALUE} when none is armed. */
    private long timerAt = Long.MAX_VALUE;
    private boolean closed;

    /** @param guard the lock every user of the queue holds; its timer takes it too */
    public DeadlineQueue(EventLoop loop, Lock guard) {
        this.loop = loop;
        this.guard = guard;
    }

    /** Adds {@code e} (not queued yet); it expires at its deadline unless removed first. */
    public void add(Entry e) {
        if (closed || queued(e)) {
            return;
        }
        if (size == heap.length) {
            heap = Arrays.copyOf(heap, size * 2);
        }
        siftUp(size++, e);
        if (timer == null || e.deadlineNanos() - timerAt < 0) {
            arm(e.deadlineNanos());
        }
    }

    /** Takes {@code e} out; false if it was not queued (expired, removed, or never added). */
    public boolean remove(Entry e) {
        if (!queued(e)) {
            return false;
        }
        int i = e.deadlineSlot();
        e.deadlineSlot(-1);
        Entry last = heap[--size];
        heap[size] = null;
        if (i < size) {
            siftDown(i, last);
            if (heap[i] == last) {
                siftUp(i, last);
            }
        }
        return true;
    }

    public int size() {
        return size;
    }

    private boolean queued(Entry e) {
        int i = e.deadlineSlot();
        return i >= 0 && i < size && heap[i] == e;
    }

    /** Cancels the timer and forgets every entry (on close: their owners are failed another way). */
    public void close() {
        closed = true;
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
        for (int i = 0; i < size; i++) {
            heap[i].deadlineSlot(-1);
            heap[i] = null;
        }
        size = 0;
    }

    private void arm(long at) {
        if (timer != null) {
            timer.cancel(false);
        }
        timerAt = at;
        timer = loop.schedule(fire, Math.max(0, at - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    private void fireLocked() {
        guard.lock();
        try {
            fire();
        } finally {
            guard.unlock();
        }
    }

    private void fire() {
        timer = null;
        timerAt = Long.MAX_VALUE;
        if (closed) {
            return;
        }
        long now = System.nanoTime();
        while (size > 0 && heap[0].deadlineNanos() - now <= 0) {
            Entry e = heap[0];
            remove(e);
            e.deadlinePassed();
        }
        // An entry added meanwhile may have armed the timer, for a later deadline than the head's.
        if (size > 0 && (timer == null || heap[0].deadlineNanos() - timerAt < 0)) {
            arm(heap[0].deadlineNanos());
        }
    }

    private void siftUp(int i, Entry e) {
        long d = e.deadlineNanos();
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            Entry p = heap[parent];
            if (d - p.deadlineNanos() >= 0) {
                break;
            }
            place(i, p);
            i = parent;
        }
        place(i, e);
    }

    private void siftDown(int i, Entry e) {
        long d = e.deadlineNanos();
        int half = size >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            Entry c = heap[child];
            int right = child + 1;
            if (right < size && heap[right].deadlineNanos() - c.deadlineNanos() < 0) {
                child = right;
                c = heap[child];
            }
            if (d - c.deadlineNanos() <= 0) {
                break;
            }
            place(i, c);
            i = child;
        }
        place(i, e);
    }

    private void place(int i, Entry e) {
        heap[i] = e;
        e.deadlineSlot(i);
    }
}
