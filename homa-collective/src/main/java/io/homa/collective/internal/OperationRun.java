package io.homa.collective.internal;

import io.homa.collective.CollectiveException;
import io.homa.collective.CollectiveMismatchException;
import io.homa.collective.CollectivePeerException;
import io.homa.collective.CollectiveTimeoutException;
import io.netty.buffer.ByteBuf;
import io.netty.util.ReferenceCountUtil;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;

/**
 * One operation on one rank: runs its {@link Schedule} against a {@link Vector}, sending each
 * segment as soon as the segments it carries have arrived, and combining or copying each arriving
 * segment as soon as the sends it would overwrite have left (one that comes earlier waits, parked).
 * The operation is done when every receive is applied and every send acknowledged. At most
 * {@link io.homa.collective.CollectiveOptions#segmentsInFlight()} segments are unacknowledged per
 * peer: a step's many segments would otherwise arrive at once and queue behind the peer's
 * handlers (Homa's overload control refuses such a flood).
 *
 * <p>Thread-safety: messages, acknowledgements and the deadline arrive on the link's threads; the
 * state is guarded by this object's lock, and sends and the future's completion happen outside it.
 */
final class OperationRun {
    /** Refusal codes at the start of a reason, so the sender raises the right exception. */
    static final char MISMATCH = 'M';
    static final char FAILED = 'F';
    static final char MALFORMED = 'R';

    private final Group group;
    final long opSeq;
    final OpDescriptor op;
    private final Vector vector;
    private final Schedule schedule;
    private final Runnable onSuccess;
    final CompletableFuture<Void> future = new CompletableFuture<>();
    private final int[] unmet;
    private final boolean[] done;
    /** Sends serialized (handed to the link). */
    private final boolean[] sent;
    private final ByteBuf[] parked;
    private int remaining;
    private boolean finished;
    private String failure;
    private char failureCode;
    private Link.Timer deadlineTimer;
    private final long deadlineAt;
    private final long deadlineNanos;
    /** Sends whose segments may go, waiting for room in their peer's window (serialized only when they leave). */
    private final java.util.ArrayDeque<Transfer>[] ready;
    private final int[] inFlight;
    private final int window;

    OperationRun(Group group, long opSeq, OpDescriptor op, Vector vector, Schedule schedule, Runnable onSuccess,
                 long deadlineNanos) {
        this.group = group;
        // Set before any message can arrive: segments that arrived early may send before start().
        this.deadlineAt = group.link.nanoTime() + deadlineNanos;
        this.deadlineNanos = deadlineNanos;
        this.window = group.segmentsInFlight;
        @SuppressWarnings("unchecked")
        java.util.ArrayDeque<Transfer>[] queues = new java.util.ArrayDeque[group.size];
        this.ready = queues;
        this.inFlight = new int[group.size];
        this.opSeq = opSeq;
        this.op = op;
        this.vector = vector;
        this.schedule = schedule;
        this.onSuccess = onSuccess;
        Transfer[] ts = schedule.transfers;
        unmet = new int[ts.length];
        done = new boolean[ts.length];
        sent = new boolean[ts.length];
        parked = new ByteBuf[ts.length];
        for (Transfer t : ts) {
            unmet[t.index] = t.deps.length;
        }
        remaining = ts.length;
    }

    /** Sends what needs nothing first and arms the deadline. */
    void start() {
        List<Outgoing> out = new ArrayList<>();
        boolean complete;
        synchronized (this) {
            if (finished) {
                return;
            }
            for (Transfer t : schedule.transfers) {
                if (t.send && t.deps.length == 0) {
                    enqueue(t, out);
                }
            }
            complete = remaining == 0;
            if (!complete) {
                deadlineTimer = group.link.schedule(deadlineNanos, this::deadlinePassed);
            }
        }
        transmit(out);
        if (complete) {
            succeed();
        }
    }

    /** A segment for this operation arrived; {@code payload} (positioned after the header) is ours. */
    void onMessage(MessageHeader h, ByteBuf payload, Link.Reply reply) {
        List<Outgoing> out = null;
        String refusal = null;
        CollectiveException fail = null;
        boolean complete = false;
        synchronized (this) {
            if (finished) {
                ReferenceCountUtil.release(payload);
                if (failure != null) {
                    // A mismatch stays a mismatch for the ranks that hear of it second hand.
                    refusal = failureCode + "rank " + group.rank + "'s " + op.describe() + " failed: " + failure;
                }
            } else {
                String diff = op.difference(h.op, h.rank);
                int idx = diff == null ? schedule.receiveIndex(h.rank, h.step, h.offset) : -1;
                Transfer t = idx >= 0 ? schedule.transfers[idx] : null;
                if (diff != null) {
                    refusal = MISMATCH + "rank " + group.rank + " runs " + op.describe() + "; you run " + h.op.describe();
                    fail = new CollectiveMismatchException(diff);
                } else if (t == null || t.count != h.count) {
                    diff = "rank " + h.rank + " sent segment [" + h.offset + ", +" + h.count + ") of step " + h.step
                            + ", which rank " + group.rank + "'s schedule for " + op.describe()
                            + " does not have (do all ranks use the same segmentBytes and algorithm?)";
                    refusal = MISMATCH + diff;
                    fail = new CollectiveMismatchException(diff);
                } else if (!vector.synthetic() && payload.readableBytes() != t.count * op.type().bytes()) {
                    diff = "rank " + h.rank + " sent " + payload.readableBytes() + " bytes for " + t.count + " "
                            + op.type() + " elements";
                    refusal = MALFORMED + diff;
                    fail = new CollectiveMismatchException(diff);
                }
                if (refusal != null) {
                    ReferenceCountUtil.release(payload);
                } else if (done[idx] || parked[idx] != null) {
                    ReferenceCountUtil.release(payload); // a duplicate
                } else if (unmet[idx] > 0) {
                    parked[idx] = payload;
                } else {
                    out = new ArrayList<>();
                    apply(t, payload, out);
                    complete = remaining == 0;
                }
            }
        }
        if (refusal != null) {
            group.countRefused();
            reply.refuse(refusal);
        } else {
            reply.ok();
        }
        if (fail != null) {
            fail(fail);
        }
        if (out != null) {
            transmit(out);
        }
        if (complete) {
            succeed();
        }
    }

    // Under the lock: combines or copies an arrived segment, then releases what waited on it.
    private void apply(Transfer t, ByteBuf payload, List<Outgoing> out) {
        try {
            if (t.reduce) {
                vector.combine(payload, t.offset, t.count, op.op());
            } else {
                vector.copyFrom(payload, t.offset, t.count);
            }
        } finally {
            ReferenceCountUtil.release(payload);
        }
        done[t.index] = true;
        remaining--;
        release(t, out);
    }

    // Under the lock: a transfer is through (a receive applied, a send serialized): its dependents may go.
    private void release(Transfer t, List<Outgoing> out) {
        for (int d : t.dependents) {
            if (--unmet[d] == 0) {
                Transfer next = schedule.transfers[d];
                if (next.send) {
                    enqueue(next, out);
                } else if (parked[d] != null) {
                    ByteBuf p = parked[d];
                    parked[d] = null;
                    apply(next, p, out);
                }
            }
        }
    }

    // Under the lock: a send may go; it leaves now if its peer's window has room, else when an acknowledgement makes room.
    private void enqueue(Transfer t, List<Outgoing> out) {
        java.util.ArrayDeque<Transfer> q = ready[t.peer];
        if (q == null) {
            q = ready[t.peer] = new java.util.ArrayDeque<>();
        }
        q.add(t);
        dispatch(t.peer, out);
    }

    // Under the lock: sends what the peer's window has room for.
    private void dispatch(int peer, List<Outgoing> out) {
        java.util.ArrayDeque<Transfer> q = ready[peer];
        while (q != null && !q.isEmpty() && inFlight[peer] < window && !finished) {
            inFlight[peer]++;
            serialize(q.poll(), out);
        }
    }

    // Under the lock: copies a send's elements into a new message (so later writes to them are safe).
    private void serialize(Transfer t, List<Outgoing> out) {
        int bytes = t.count * op.type().bytes();
        ByteBuf m = group.link.alloc().buffer(MessageHeader.LENGTH + bytes);
        MessageHeader.write(m, group.groupId, group.rank, group.size, opSeq, op, t.step, t.offset, t.count);
        vector.writeTo(m, t.offset, t.count);
        out.add(new Outgoing(t, m));
        sent[t.index] = true;
        release(t, out);
    }

    private void transmit(List<Outgoing> out) {
        for (Outgoing o : out) {
            long left = Math.max(1, deadlineAt - group.link.nanoTime());
            group.countSent(o.message.readableBytes());
            Transfer t = o.transfer;
            group.link.send(t.peer, o.message, left, (failure, refusal) -> acknowledged(t, failure, refusal));
        }
    }

    private void acknowledged(Transfer t, Throwable failure, String refusal) {
        if (failure != null) {
            fail(new CollectivePeerException(t.peer, "rank " + t.peer + " did not take " + op.describe()
                    + " segment (step " + t.step + "): " + failure, failure));
            return;
        }
        if (refusal != null) {
            String reason = refusal.isEmpty() ? "" : refusal.substring(1);
            fail(!refusal.isEmpty() && refusal.charAt(0) == MISMATCH
                    ? new CollectiveMismatchException("rank " + t.peer + " refused: " + reason)
                    : new CollectivePeerException(t.peer, "rank " + t.peer + " refused: " + reason, null));
            return;
        }
        boolean complete;
        List<Outgoing> out = new ArrayList<>();
        synchronized (this) {
            if (finished || done[t.index]) {
                return;
            }
            done[t.index] = true;
            remaining--;
            complete = remaining == 0;
            inFlight[t.peer]--;
            dispatch(t.peer, out);
        }
        transmit(out);
        if (complete) {
            succeed();
        }
    }

    private void deadlinePassed() {
        List<Integer> missing;
        synchronized (this) {
            if (finished || remaining == 0) {
                return; // done (succeed() is on its way)
            }
            // The peers at fault: receives not arrived, sends that left and were not acknowledged
            // (not sends still waiting on this rank's own receives).
            TreeSet<Integer> ranks = new TreeSet<>();
            for (Transfer t : schedule.transfers) {
                if (!done[t.index] && parked[t.index] == null && (!t.send || sent[t.index])) {
                    ranks.add(t.peer);
                }
            }
            missing = new ArrayList<>(ranks);
        }
        fail(new CollectiveTimeoutException("rank " + group.rank + "'s " + op.describe() + " (operation " + opSeq
                + ") did not finish within its deadline: still waiting for ranks " + missing, missing));
    }

    private void succeed() {
        synchronized (this) {
            if (finished) {
                return;
            }
            finished = true;
            if (deadlineTimer != null) {
                deadlineTimer.cancel();
            }
            if (onSuccess != null) {
                onSuccess.run();
            }
        }
        group.finished(this, null);
        future.complete(null);
    }

    void fail(CollectiveException e) {
        synchronized (this) {
            if (finished || remaining == 0) {
                return; // done (succeed() is on its way)
            }
            finished = true;
            failure = e.getMessage();
            failureCode = e instanceof CollectiveMismatchException ? MISMATCH : FAILED;
            if (deadlineTimer != null) {
                deadlineTimer.cancel();
            }
            for (int i = 0; i < parked.length; i++) {
                if (parked[i] != null) {
                    ReferenceCountUtil.release(parked[i]);
                    parked[i] = null;
                }
            }
        }
        group.finished(this, (e instanceof CollectiveMismatchException ? MISMATCH : FAILED) + e.getMessage());
        future.completeExceptionally(e);
    }

    private record Outgoing(Transfer transfer, ByteBuf message) {
    }
}
