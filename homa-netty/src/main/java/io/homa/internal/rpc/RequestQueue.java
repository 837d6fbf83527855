package io.homa.internal.rpc;

import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * The requests of one socket waiting for a handler thread, managed by how long they wait, not
 * only by how many there are (controlled delay, as in Facebook's "Fail at Scale", 2015):
 *
 * <ul>
 *   <li>While the queue empties now and then, it is first in, first out, and a request waits as
 *       long as its deadline allows.</li>
 *   <li>When it has not been empty for an <em>interval</em>, the server is overloaded: requests
 *       are taken newest first (adaptive LIFO), so that callers who still wait get answers and a
 *       new caller does not wait behind the backlog; and the oldest request is refused
 *       (OVERLOADED: its caller hears at once, and may retry elsewhere or later) once it has
 *       waited longer than the <em>target</em> and working off the requests in front of it (at
 *       the handlers' pace) would take {@link #WORK_SHARE} of the time it has left or more. So
 *       the queue keeps what the handlers can serve with time to spare: a burst they can work
 *       off in time is served whole, a flood is refused early at its oldest end, and what is kept
 *       is served after it, before its callers' deadlines.</li>
 *   <li>A request that cannot be served before its deadline at all (the work in front of it, at
 *       the handlers' pace, outlasts it) is refused at once, overload or not, rather than left to
 *       expire: the newest in first in, first out order, the oldest under overload.</li>
 *   <li>A request whose deadline (its caller's, or the server's request timeout) has passed is
 *       never started, and is refused (its caller may still wait: the server takes the deadline
 *       early).</li>
 * </ul>
 *
 * <p>The target and interval are floors: each is raised to the handlers' own pace (the mean time a
 * handler takes, and four times that), so that a slow handler's normal queue is not mistaken for
 * overload. The pace at which the queue is worked off is the slower of two: the mean handler time
 * over the handlers that run at once, and the rate at which handlers really finished while the
 * queue stayed non-empty. The second is what a machine short of CPU (or an executor shared with
 * other work) manages, when threads wait to be scheduled between handlers. Every method takes the
 * time ({@link System#nanoTime()}) from its caller, so that tests drive it without a clock. Any
 * thread; one lock, held for a few field updates.
 *
 * <p>What to do with a request taken out is its {@link InboundRequest#queueVerdict()}, decided under
 * the lock and acted on by the caller after it.
 *
 * <p>Internal use only.
 */
public final class RequestQueue {
    /** Start its handler. */
    public static final int RUN = 0;
    /** Its deadline passed while it waited: refuse it unrun. */
    public static final int EXPIRED = 1;
    /**
     * Refuse it with OVERLOADED: under overload it waited longer than the target and is too far
     * back, or (overload or not) the work in front of it would outlast its deadline.
     */
    public static final int SHED = 2;
    /** It was answered, dropped or cancelled while it waited: nothing to do. */
    public static final int GONE = 3;

    /**
     * The share of a waiting request's time left that the work in front of it may take under
     * overload; beyond it the request is refused. Not all of it: the server learns a deadline only
     * when its event loop reads the request, so the deadline it knows is late by however long the
     * request's packets waited in the socket (seconds, on a machine whose CPU the flood took), and
     * the pace is an estimate. Not much less: in a flood whose callers share one deadline (they
     * called at once), what the queue keeps is about what gets served, so the goodput is about
     * this share of the handlers' capacity (it was a half, which served about half). A request
     * kept too many is refused later, by the same test, still before its deadline.
     */
    static final double WORK_SHARE = 0.8;
    /** The shortest span over which the handlers' finishing rate is measured. */
    static final long PACE_WINDOW_NANOS = 20_000_000L;
    /** The fewest handlers finished in a span for its rate to count. */
    static final int PACE_WINDOW_COMPLETIONS = 8;
    /** Spans whose median is the measured pace: one slow span (a collection, a burst of compiling) moves nothing. */
    static final int PACE_SPANS = 7;
    /** Spans measured before the measured pace counts. */
    static final int PACE_SPANS_NEEDED = 3;
    /** A measured rate older than this is forgotten (the overload it came from has passed), as are older spans. */
    static final long PACE_MEMORY_NANOS = 2_000_000_000L;

    /** Buckets of the queue-delay histogram: bucket i holds delays in [2^i, 2^(i+1)) microseconds. */
    public static final int DELAY_BUCKETS = 32;

    private final int maxQueued;
    private final long targetFloor;
    private final long intervalFloor;
    private final ArrayDeque<InboundRequest> waiting = new ArrayDeque<>();
    /** When the queue was last seen empty. */
    private long lastEmpty;
    /** Mean handler time (ns), an exponentially weighted moving average (1/8 per sample): target and interval. */
    private volatile long serviceNanos;
    /**
     * The same mean, smoothed more (1/32 per sample): the pace, because a refusal cannot be taken
     * back, and a few handlers slowed at once (the machine busy for a moment) must not refuse a
     * large part of the queue.
     */
    private volatile long slowServiceNanos;
    /** Handlers that run at once: the pool's threads, or (0) the most ever seen running, for an executor of the user's. */
    private final int parallelism;
    private final java.util.concurrent.atomic.AtomicInteger running = new java.util.concurrent.atomic.AtomicInteger();
    private volatile int mostRunning = 1;
    private long highWater;
    /** The span in which handlers' completions are being counted (see {@link #completed}). */
    private long windowStart;
    private int windowCompletions;
    /** Whether the queue emptied since the span began (its handlers may have waited for work); a new queue has none. */
    private boolean emptiedInWindow = true;
    /** The time between completions (ns) of the last {@link #PACE_SPANS} spans, and when each ended: a ring. */
    private final long[] spanPaces = new long[PACE_SPANS];
    private final long[] spanEnds = new long[PACE_SPANS];
    /** Where the recent spans' paces are sorted (under the lock). */
    private final long[] freshPaces = new long[PACE_SPANS];
    private int spans;
    private int nextSpan;
    /** The median of the recent spans (see {@link #completed}); 0 until {@link #PACE_SPANS_NEEDED} were measured. */
    private long measuredPace;
    private long measuredAt;
    /** How long {@link #measuredPace} holds: {@link #PACE_MEMORY_NANOS}, or three times the span that closed it. */
    private long measuredMemory;
    private final long[] delays = new long[DELAY_BUCKETS];

    /**
     * @param maxQueued      most requests waiting at once (beyond: {@link #offer} refuses)
     * @param targetNanos    longest wait under overload (raised to the mean handler time)
     * @param intervalNanos  how long the queue must stay non-empty to count as overloaded (raised
     *                       to four times the mean handler time)
     * @param parallelism    handlers that run at once (the pool's threads), or 0 if unknown (an
     *                       executor of the user's): then the most seen running at once
     */
    public RequestQueue(int maxQueued, long targetNanos, long intervalNanos, int parallelism) {
        this.maxQueued = maxQueued;
        this.targetFloor = targetNanos;
        this.intervalFloor = intervalNanos;
        this.parallelism = parallelism;
    }

    /** Queues {@code r} (whose {@link InboundRequest#deadline} is set); false if {@code maxQueued} wait already. */
    public synchronized boolean offer(InboundRequest r, long now) {
        if (waiting.size() >= maxQueued) {
            return false;
        }
        if (waiting.isEmpty()) {
            emptied(now);
        }
        r.queuedAt = now;
        waiting.addLast(r);
        highWater = Math.max(highWater, waiting.size());
        return true;
    }

    /**
     * The next request for a free handler thread, or null if none waits: the oldest normally, the
     * newest under overload. Its {@link InboundRequest#queueVerdict()} says whether to run it; take
     * again after one that is not to run.
     */
    public synchronized InboundRequest take(long now) {
        boolean overloaded = overloaded(now);
        InboundRequest r = overloaded ? waiting.pollLast() : waiting.pollFirst();
        if (r == null) {
            return null;
        }
        if (waiting.isEmpty()) {
            emptied(now);
        }
        int v = verdict(r, now, overloaded, 0);
        r.queueVerdict(v);
        if (v == RUN) {
            long waited = Math.max(0, now - r.queuedAt) / 1_000;
            delays[Math.min(DELAY_BUCKETS - 1, 63 - Long.numberOfLeadingZeros(Math.max(1, waited)))]++;
        }
        return r;
    }

    /**
     * Under overload, the oldest request if it is to be refused or dropped now (it waited past the
     * target and cannot be reached before its deadline with time to spare, or not at all, or its
     * deadline passed); otherwise (first in, first out) the newest if the work in front of it
     * outlasts its deadline; else null. Called after each {@link #offer} and before each
     * {@link #take}, until null, so that requests that cannot be served are refused while their
     * callers still listen, not when a thread would have reached them.
     */
    public synchronized InboundRequest pollStale(long now) {
        // Under overload the oldest is looked at (newer ones go first); otherwise, first in, first
        // out, the newest (all the others go first), and only to refuse it if it cannot be served
        // (one already gone or expired is left for take: expired, it is remembered).
        boolean overloaded = overloaded(now);
        InboundRequest r = overloaded ? waiting.peekFirst() : waiting.peekLast();
        if (r == null) {
            return null;
        }
        int v = verdict(r, now, overloaded, waiting.size() - 1);
        if (v == RUN || (!overloaded && v != SHED)) {
            return null;
        }
        if (overloaded) {
            waiting.pollFirst();
        } else {
            waiting.pollLast();
        }
        if (waiting.isEmpty()) {
            emptied(now);
        }
        r.queueVerdict(v);
        return r;
    }

    /** What to do with {@code r}, behind {@code ahead} requests that go first (the newer ones under overload). */
    private int verdict(InboundRequest r, long now, boolean overloaded, int ahead) {
        if (!r.isOpen()) {
            return GONE;
        }
        long left = r.deadline - now;
        if (left <= 0) {
            return EXPIRED;
        }
        if (overloaded && now - r.queuedAt > target() && tooFarBack(ahead, left, now)) {
            return SHED;
        }
        if (hopeless(ahead, left, now)) {
            return SHED; // it would only expire: no need to wait for the target first
        }
        return RUN;
    }

    /**
     * Whether a request behind {@code ahead} others cannot be served before its deadline at all:
     * working them off, at the handlers' {@link #pace}, takes all its {@code left} ns or more. Such
     * a request is refused at once, overload or not, rather than left to expire unanswered (its
     * caller would hear nothing until its own deadline). False while the pace is unknown.
     */
    private boolean hopeless(int ahead, long left, long now) {
        return (double) ahead * pace(now) >= left; // left > 0 (verdict), so no work ahead or no pace is never hopeless
    }

    /**
     * Whether a request behind {@code ahead} others is too far back to be served with time to
     * spare: working them off, at the handlers' {@link #pace}, takes {@link #WORK_SHARE} of its
     * {@code left} ns or more.
     */
    private boolean tooFarBack(int ahead, long left, long now) {
        return (double) ahead * pace(now) >= left * WORK_SHARE;
    }

    /**
     * Nanoseconds per request the queue is worked off in: the mean handler time over the handlers
     * that run at once, or the time between completions measured lately under load, if longer.
     */
    private double pace(long now) {
        double nominal = (double) slowServiceNanos / handlers();
        if (measuredPace > 0 && now - measuredAt < measuredMemory) {
            return Math.max(nominal, measuredPace);
        }
        return nominal;
    }

    /**
     * A handler finished at {@code now} (its thread takes the next request right after): counts
     * completions in spans during which the queue never emptied, and from each span of at least
     * {@link #PACE_WINDOW_NANOS} and {@link #PACE_WINDOW_COMPLETIONS} completions takes the time
     * between completions. {@link #measuredPace} is the median of the spans that ended within
     * the memory ({@link #PACE_MEMORY_NANOS}, or three spans' time for handlers so slow that 8 take
     * longer), once there are {@link #PACE_SPANS_NEEDED} of them: one span in which the machine
     * stalled does not refuse a large part of the queue at once (a refusal cannot be taken back),
     * and the spans of an overload long past do not come back with the next. A span in which the
     * queue emptied is dropped: its handlers may have waited for work, which is not their pace.
     */
    public synchronized void completed(long now) {
        if (waiting.isEmpty() || emptiedInWindow) {
            emptiedInWindow = false;
            windowStart = now;
            windowCompletions = 0;
            return;
        }
        windowCompletions++;
        long span = now - windowStart;
        if (span >= PACE_WINDOW_NANOS && windowCompletions >= PACE_WINDOW_COMPLETIONS) {
            spanPaces[nextSpan] = span / windowCompletions;
            spanEnds[nextSpan] = now;
            nextSpan = (nextSpan + 1) % PACE_SPANS;
            spans = Math.min(spans + 1, PACE_SPANS);
            long memory = Math.max(PACE_MEMORY_NANOS, 3 * span);
            long[] fresh = freshPaces;
            int n = 0;
            for (int i = 0; i < spans; i++) {
                if (now - spanEnds[i] < memory) {
                    fresh[n++] = spanPaces[i];
                }
            }
            if (n >= PACE_SPANS_NEEDED) {
                Arrays.sort(fresh, 0, n);
                measuredPace = fresh[(n - 1) / 2]; // of two middle ones, the faster: refuse less
                measuredAt = now;
                measuredMemory = memory;
            }
            windowStart = now;
            windowCompletions = 0;
        }
    }

    private int handlers() {
        return parallelism > 0 ? parallelism : mostRunning;
    }

    /** A handler starts (any thread): counts those running, for the parallelism of an unknown executor. */
    public void started() {
        int n = running.incrementAndGet();
        if (n > mostRunning) {
            mostRunning = n;
        }
    }

    /** The queue is empty at {@code now}: overload starts counting afresh, and the span in progress is not the handlers' pace. */
    private void emptied(long now) {
        lastEmpty = now;
        emptiedInWindow = true;
    }

    /** Whether the queue has not been empty for an interval. */
    private boolean overloaded(long now) {
        return !waiting.isEmpty() && now - lastEmpty > interval();
    }

    /**
     * A handler ran for {@code nanos} (any thread; updates the mean, races lose a sample at worst).
     * A sample is capped at four times the mean plus 1 ms: a handler preempted for a garbage
     * collection or a burst of JIT compiling would otherwise make the queue think, for dozens of
     * requests, that its handlers are ten times slower than they are, and refuse a burst that
     * they can work off in time. A handler that really is slower raises the mean within a few
     * dozen requests.
     */
    public void served(long nanos) {
        running.decrementAndGet();
        long s = serviceNanos;
        long sample = Math.min(Math.max(0, nanos), 4 * s + 1_000_000);
        serviceNanos = s + (sample - s) / 8;
        long slow = slowServiceNanos;
        slowServiceNanos = slow == 0 ? serviceNanos : slow + (sample - slow) / 32;
    }

    /** The longest wait allowed under overload now. */
    public long target() {
        return Math.max(targetFloor, serviceNanos);
    }

    /** How long the queue must stay non-empty to count as overloaded now. */
    public long interval() {
        return Math.max(intervalFloor, 4 * serviceNanos);
    }

    /** Requests waiting now. */
    public synchronized int size() {
        return waiting.size();
    }

    /** The most requests that ever waited at once. */
    public synchronized long highWater() {
        return highWater;
    }

    /** Adds the queue-delay histogram (requests started, by their wait) into {@code into}. */
    public synchronized void addDelays(long[] into) {
        for (int i = 0; i < DELAY_BUCKETS; i++) {
            into[i] += delays[i];
        }
    }

    /** Takes every waiting request out (close); the caller drops them. */
    public synchronized InboundRequest pollAny() {
        return waiting.pollFirst();
    }
}
