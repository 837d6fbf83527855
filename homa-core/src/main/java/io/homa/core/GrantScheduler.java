package io.homa.core;

/**
 * The receiver's scheduler (Linux Homa's grant.c). Messages that still need grants are ranked by
 * fewest bytes left to receive (ties to the older); the top {@code maxOvercommit} are granted,
 * every peer getting one granted message before any peer gets a second. Each granted message is
 * granted up to {@code received + window}, capped by its length and by the total incoming budget;
 * the ranked order means that when budget frees up, the best-ranked needy messages get it first.
 * A small share of granted bytes goes to the oldest message so that a long one cannot starve.
 *
 * <p>Grants are batched: once a message has its first grant, the next goes out only when its
 * window can grow by a batch ({@code grantBatchSegments} segments, at most a quarter of the
 * window), not after every DATA packet, so a long message costs one GRANT per batch of DATA. A
 * grant that changes the message's priority, or reaches a sender with nothing granted left to
 * send, goes at once: the one must not wait, the other would stall.
 *
 * <p>The scheduler alone keeps the incoming budget: the engine tells it when a message starts
 * ({@link #track}), when bytes arrive ({@link #received}) and when a message goes ({@link #forget}).
 */
final class GrantScheduler {
    /** Where the scheduler sends its decisions. */
    interface Sink {
        void grant(IncomingMessage m, int newGranted, int priority);
    }

    private final EngineConfig cfg;
    /** Rank by arrival instead of SRPT: the simulator's ablation only ({@link EngineConfig#fifoGrantOrderForTests}). */
    private final boolean arrivalOrder;
    private final int minIncrement;
    /** {@code grantBatchSegments} segments, in bytes. */
    private final long batchBytes;
    private final int scheduledLevels;
    /** Messages that still need grants, kept ranked (best first) between calls. */
    private IncomingMessage[] grantable = new IncomingMessage[16];
    private int count;
    private final IncomingMessage[] active;
    /** Bytes granted (or unscheduled) but not yet received, over all live incoming messages. */
    private long totalIncoming;
    /** Granted bytes owed to the oldest message (thousandths of a byte x fraction). */
    private long fifoCredit;

    GrantScheduler(EngineConfig cfg) {
        this.cfg = cfg;
        this.arrivalOrder = cfg.fifoGrantOrderForTests;
        this.minIncrement = cfg.segmentPayload();
        this.batchBytes = (long) cfg.grantBatchSegments * minIncrement;
        this.scheduledLevels = cfg.maxScheduledPriority + 1;
        this.active = new IncomingMessage[cfg.maxOvercommit];
    }

    void add(IncomingMessage m) {
        if (!m.grantable && m.granted < m.length) {
            m.grantable = true;
            if (count == grantable.length) {
                grantable = java.util.Arrays.copyOf(grantable, count * 2);
            }
            grantable[count++] = m;
        }
    }

    void remove(IncomingMessage m) {
        if (m.grantable) {
            m.grantable = false;
            for (int i = 0; i < count; i++) {
                if (grantable[i] == m) {
                    System.arraycopy(grantable, i + 1, grantable, i, count - i - 1);
                    grantable[--count] = null;
                    break;
                }
            }
        }
    }

    int size() {
        return count;
    }

    /** Bytes granted (or unscheduled) but not yet received, over all incoming messages: the budget in use. */
    long incoming() {
        return totalIncoming;
    }

    /** A new incoming message: what it may receive without a further grant counts against the budget. */
    void track(IncomingMessage m) {
        totalIncoming += m.outstanding();
    }

    /** Bytes arrived for {@code m}, which had {@code outstandingBefore} bytes outstanding. */
    void received(IncomingMessage m, long outstandingBefore) {
        totalIncoming += m.outstanding() - outstandingBefore;
    }

    /** The message is complete or its RPC ended: out of the ranking, its budget released. */
    void forget(IncomingMessage m) {
        remove(m);
        totalIncoming -= m.outstanding();
    }

    /** Scheduled priority for the message ranked {@code rank} (0 best) among {@code n} granted. */
    int priorityFor(int rank, int n) {
        return Math.max(0, Math.min(n, scheduledLevels) - 1 - rank);
    }

    /** Issues every grant that the current state allows. */
    void schedule(Sink sink) {
        if (count == 0) {
            return;
        }
        rank();
        int n = pickActive();
        // Never less than a segment: a smaller window could never be granted (see below).
        long window = Math.max(minIncrement, cfg.grantWindow > 0 ? cfg.grantWindow : cfg.maxIncoming / (n + 1));
        long batch = batchFor(window);
        for (int i = 0; i < n; i++) {
            IncomingMessage m = active[i];
            long growth = m.received() + window - m.granted;
            long target = Math.min(m.length, m.received() + window);
            if (target <= m.granted) {
                continue;
            }
            long budget = cfg.maxIncoming - totalIncoming;
            if (budget <= 0) {
                break;
            }
            long increment = Math.min(target - m.granted, budget);
            boolean finishes = m.granted + increment >= m.length;
            if (increment < minIncrement && !finishes && m.outstanding() > 0) {
                // Not worth a packet while the sender still has granted bytes to send; it stays needy
                // and ranks first when budget frees. A sender with nothing granted gets even a small
                // grant, so that nothing can stall.
                continue;
            }
            int priority = priorityFor(i, n);
            if (!grantNow(m, increment, growth, finishes, priority, batch)) {
                continue; // the window grows a little with every packet: wait for a batch
            }
            issue(sink, m, (int) (m.granted + increment), priority);
            fifoCredit += increment * cfg.grantFifoFraction;
        }
        if (cfg.grantFifoFraction > 0 && fifoCredit >= (long) cfg.fifoGrantIncrement * 1000 && grantOldest(sink)) {
            fifoCredit -= (long) cfg.fifoGrantIncrement * 1000; // spent only when a FIFO grant went out
        }
        java.util.Arrays.fill(active, 0, n, null);
    }

    /**
     * Bytes by which a window of {@code window} bytes must be able to grow before a batched grant:
     * {@code grantBatchSegments} segments, but at most a quarter of the window (so that three
     * quarters of it stay in flight while the batch fills), and never less than a segment.
     */
    long batchFor(long window) {
        return Math.max(minIncrement, Math.min(batchBytes, window / 4));
    }

    /**
     * The batching decision for a grant of {@code increment} bytes at {@code priority} to {@code m},
     * whose window could grow by {@code growth} bytes (before the message's end and the budget cap
     * it) and which the grant would complete if {@code finishes}. It goes now if batching is off
     * ({@code batch} one segment), if it is the message's first grant, if it changes the message's
     * priority, or if the sender has nothing granted left to send; otherwise only once it carries a
     * whole batch, or the rest of the message after the window could grow by a batch.
     */
    boolean grantNow(IncomingMessage m, long increment, long growth, boolean finishes, int priority, long batch) {
        if (batch <= minIncrement || !m.grantedOnce || priority != m.grantPriority || m.outstanding() == 0) {
            return true;
        }
        return finishes ? growth >= batch : increment >= batch;
    }

    /** Grants the oldest message one FIFO increment; false if none could be given now. */
    private boolean grantOldest(Sink sink) {
        IncomingMessage oldest = null;
        for (int i = 0; i < count; i++) {
            IncomingMessage m = grantable[i];
            if (m.granted < m.length && (oldest == null || m.seq < oldest.seq)) {
                oldest = m;
            }
        }
        if (oldest == null) {
            return false;
        }
        long budget = cfg.maxIncoming - totalIncoming;
        long increment = Math.min(Math.min(cfg.fifoGrantIncrement, oldest.length - oldest.granted), budget);
        if (increment <= 0 || (increment < minIncrement && oldest.granted + increment < oldest.length)) {
            return false; // keep the credit until a worthwhile grant fits the budget
        }
        issue(sink, oldest, (int) (oldest.granted + increment), 0);
        return true;
    }

    private void issue(Sink sink, IncomingMessage m, int newGranted, int priority) {
        long before = m.outstanding();
        m.granted = newGranted;
        m.grantPriority = priority;
        m.grantedOnce = true;
        totalIncoming += m.outstanding() - before;
        if (m.granted >= m.length) {
            remove(m);
        }
        sink.grant(m, newGranted, priority);
    }

    /**
     * Restores the ranking. Between two calls only a few keys change (bytes arrived for one
     * message, a new message was appended), so an insertion sort is linear here and allocates
     * nothing, unlike a general sort.
     */
    private void rank() {
        sort(grantable, count);
    }

    /**
     * Insertion sort by rank: the list is nearly in order between calls (a packet changes one
     * message's remaining bytes), so this is linear; and it calls no comparator objects, which the
     * testbed's profile showed at 8% of a node's Java time when it ran on every DATA packet.
     */
    private void sort(IncomingMessage[] a, int n) {
        for (int i = 1; i < n; i++) {
            IncomingMessage m = a[i];
            int j = i - 1;
            while (j >= 0 && ranksAfter(a[j], m)) {
                a[j + 1] = a[j];
                j--;
            }
            a[j + 1] = m;
        }
    }

    /**
     * Whether {@code a} ranks after {@code b}: SRPT (more bytes left, or as many and younger), or,
     * in the arrival-order ablation, younger.
     */
    private boolean ranksAfter(IncomingMessage a, IncomingMessage b) {
        if (!arrivalOrder) {
            long ra = a.remaining();
            long rb = b.remaining();
            if (ra != rb) {
                return ra > rb;
            }
        }
        return a.seq > b.seq;
    }

    /** Fills {@link #active} from the ranked list: one message per peer first, then the rest. */
    private int pickActive() {
        int n = 0;
        int limit = active.length;
        for (int i = 0; i < count && n < limit; i++) {
            IncomingMessage m = grantable[i];
            if (!peerTaken(m.rpc.peer, n)) {
                active[n++] = m;
            }
        }
        for (int i = 0; i < count && n < limit; i++) {
            IncomingMessage m = grantable[i];
            if (!taken(m, n)) {
                active[n++] = m;
            }
        }
        sort(active, n);
        return n;
    }

    private boolean peerTaken(Peer p, int n) {
        for (int i = 0; i < n; i++) {
            if (active[i].rpc.peer == p) {
                return true;
            }
        }
        return false;
    }

    private boolean taken(IncomingMessage m, int n) {
        for (int i = 0; i < n; i++) {
            if (active[i] == m) {
                return true;
            }
        }
        return false;
    }
}
