package io.homa.collective.internal;

import io.homa.collective.Algorithm;
import io.homa.collective.CollectiveBuffer;
import io.homa.collective.CollectiveException;
import io.homa.collective.CollectiveGroup;
import io.homa.collective.CollectiveOptions;
import io.homa.collective.CollectiveStats;
import io.homa.collective.DataType;
import io.homa.collective.ReduceOp;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.ReferenceCountUtil;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * A rank of a collective group over a {@link Link}: numbers the operations in call order, routes
 * each arriving segment to its operation (holding those of operations this rank has not started
 * yet, within {@link CollectiveOptions#maxEarlyBytes()}), and refuses what is malformed or foreign.
 */
public final class Group implements CollectiveGroup, Link.Inbound {
    /** Operations this far ahead of this rank's are refused (a peer cannot be that far ahead in a correct program). */
    private static final long MAX_AHEAD = 1 << 16;
    private static final int RECENT_FAILURES = 256;

    final Link link;
    final int size;
    final int rank;
    final int groupId;
    final int segmentsInFlight;
    private final CollectiveOptions options;
    private final Map<ScheduleKey, Schedule> schedules = new ConcurrentHashMap<>();
    private long nextSeq;
    private boolean closed;
    private final Map<Long, OperationRun> active = new HashMap<>();
    private final Map<Long, List<Early>> early = new HashMap<>();
    private long earlyBytes;
    private int earlyMessages;
    /** Messages held for operations not started yet, whatever their size (a flood of empty ones is refused too). */
    private static final int MAX_EARLY_MESSAGES = 1 << 20;
    private final Map<Long, String> recentFailures = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, String> e) {
            return size() > RECENT_FAILURES;
        }
    };
    private final LongAdder operations = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final LongAdder messagesSent = new LongAdder();
    private final LongAdder bytesSent = new LongAdder();
    private final LongAdder messagesReceived = new LongAdder();
    private final LongAdder bytesReceived = new LongAdder();
    private final LongAdder refused = new LongAdder();

    public Group(Link link, int size, int rank, CollectiveOptions options) {
        this.link = link;
        this.size = size;
        this.rank = rank;
        this.groupId = options.groupId();
        this.segmentsInFlight = options.segmentsInFlight();
        this.options = options;
        link.start(this);
    }

    /** The checks every factory makes. */
    public static void check(List<InetSocketAddress> members, int rank, CollectiveOptions options) {
        if (members == null || members.isEmpty()) {
            throw new IllegalArgumentException("members must list at least one address");
        }
        if (members.size() > 4096) {
            throw new IllegalArgumentException("a group has at most 4096 ranks, not " + members.size());
        }
        if (members.stream().anyMatch(java.util.Objects::isNull) || new HashSet<>(members).size() != members.size()) {
            throw new IllegalArgumentException("members must be distinct addresses, not null: " + members);
        }
        if (rank < 0 || rank >= members.size()) {
            throw new IllegalArgumentException("rank " + rank + " is not in [0, " + members.size() + ")");
        }
        if (options == null) {
            throw new IllegalArgumentException("options must not be null (use CollectiveOptions.defaults())");
        }
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return size;
    }

    // ------------------------------------------------------------------ operations

    @Override
    public CompletableFuture<Void> allReduce(CollectiveBuffer data, ReduceOp op) {
        Vector v = vector(data, "data");
        need(op, "op");
        long bytes = (long) v.elements() * v.type().bytes();
        Algorithm a = options.algorithm();
        boolean hd = Integer.bitCount(size) == 1 && size > 1
                && (a == Algorithm.HALVING_DOUBLING || (a == Algorithm.AUTO && bytes <= options.halvingDoublingMaxBytes()));
        Algorithm chosen = hd ? Algorithm.HALVING_DOUBLING : Algorithm.RING;
        OpDescriptor d = new OpDescriptor(OpKind.ALL_REDUCE, v.type(), op, v.elements(), 0, chosen);
        int seg = segmentElements(v.type());
        return submit(d, v, () -> hd ? Schedules.halvingDoublingAllReduce(size, rank, v.elements(), seg)
                : Schedules.ringAllReduce(size, rank, v.elements(), seg), null);
    }

    @Override
    public CompletableFuture<Void> reduceScatter(CollectiveBuffer input, CollectiveBuffer output, ReduceOp op) {
        Vector in = vector(input, "input");
        Vector out = vector(output, "output");
        need(op, "op");
        sameType(in, out);
        int want = Schedules.blockLength(in.elements(), size, rank);
        if (out.elements() != want) {
            throw new IllegalArgumentException("rank " + rank + "'s block of " + in.elements() + " elements over "
                    + size + " ranks has " + want + " elements; output has " + out.elements());
        }
        OpDescriptor d = new OpDescriptor(OpKind.REDUCE_SCATTER, in.type(), op, in.elements(), 0, Algorithm.RING);
        int seg = segmentElements(in.type());
        int from = Schedules.blockOffset(in.elements(), size, rank);
        return submit(d, in, () -> Schedules.reduceScatter(size, rank, in.elements(), seg),
                () -> copy(in, from, out, 0, want));
    }

    @Override
    public CompletableFuture<Void> allGather(CollectiveBuffer input, CollectiveBuffer output) {
        Vector in = vector(input, "input");
        Vector out = vector(output, "output");
        sameType(in, out);
        int want = Schedules.blockLength(out.elements(), size, rank);
        if (in.elements() != want) {
            throw new IllegalArgumentException("rank " + rank + "'s block of " + out.elements() + " elements over "
                    + size + " ranks has " + want + " elements; input has " + in.elements());
        }
        copy(in, 0, out, Schedules.blockOffset(out.elements(), size, rank), want);
        OpDescriptor d = new OpDescriptor(OpKind.ALL_GATHER, out.type(), ReduceOp.SUM, out.elements(), 0, Algorithm.RING);
        int seg = segmentElements(out.type());
        return submit(d, out, () -> Schedules.allGather(size, rank, out.elements(), seg), null);
    }

    @Override
    public CompletableFuture<Void> broadcast(CollectiveBuffer data, int root) {
        Vector v = vector(data, "data");
        if (root < 0 || root >= size) {
            throw new IllegalArgumentException("root " + root + " is not in [0, " + size + ")");
        }
        int seg = segmentElements(v.type());
        long segments = ((long) v.elements() + seg - 1) / seg;
        // A chain moves the data once per rank, a tree log2(n) times from the root: the chain wins
        // once the segments outnumber the tree's depth.
        boolean chain = size > 2 && segments > 32 - Integer.numberOfLeadingZeros(size - 1);
        OpDescriptor d = new OpDescriptor(OpKind.BROADCAST, v.type(), ReduceOp.SUM, v.elements(), root,
                chain ? Algorithm.RING : Algorithm.AUTO);
        return submit(d, v, () -> chain ? Schedules.chainBroadcast(size, rank, root, v.elements(), seg)
                : Schedules.treeBroadcast(size, rank, root, v.elements(), seg), null);
    }

    @Override
    public CompletableFuture<Void> barrier() {
        OpDescriptor d = new OpDescriptor(OpKind.BARRIER, DataType.INT, ReduceOp.SUM, 0, 0, Algorithm.AUTO);
        return submit(d, new SyntheticVector(DataType.INT, 0), () -> Schedules.barrier(size, rank), null);
    }

    private CompletableFuture<Void> submit(OpDescriptor d, Vector v, Supplier<Schedule> make, Runnable onSuccess) {
        Schedule s = schedules.computeIfAbsent(new ScheduleKey(d, options.segmentBytes()), k -> make.get());
        if (schedules.size() > 256) {
            schedules.clear(); // a bounded cache: most programs repeat a few shapes
        }
        OperationRun run;
        List<Early> waiting;
        long deadlineNanos = options.deadline().toNanos(); // CollectiveOptions keeps it within a long's nanoseconds
        synchronized (this) {
            if (closed) {
                return CompletableFuture.failedFuture(new CollectiveException("the group is closed"));
            }
            run = new OperationRun(this, nextSeq++, d, v, s, onSuccess, deadlineNanos);
            active.put(run.opSeq, run);
            waiting = early.remove(run.opSeq);
            if (waiting != null) {
                for (Early e : waiting) {
                    earlyBytes -= e.bytes;
                    earlyMessages--;
                }
            }
        }
        operations.increment();
        run.start();
        if (waiting != null) {
            for (Early e : waiting) {
                run.onMessage(e.header, e.payload, NO_REPLY); // answered when they arrived
            }
        }
        return run.future;
    }

    private static final Link.Reply NO_REPLY = new Link.Reply() {
        @Override
        public void ok() {
        }

        @Override
        public void refuse(String reason) {
        }
    };

    private int segmentElements(DataType t) {
        return Math.max(1, options.segmentBytes() / t.bytes());
    }

    private static void copy(Vector from, int fromOffset, Vector to, int toOffset, int count) {
        if (count == 0 || from.synthetic() || to.synthetic()) {
            return;
        }
        ByteBuf tmp = Unpooled.buffer(count * from.type().bytes());
        try {
            from.writeTo(tmp, fromOffset, count);
            to.copyFrom(tmp, toOffset, count);
        } finally {
            tmp.release();
        }
    }

    private static Vector vector(CollectiveBuffer b, String name) {
        if (b == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
        return BufferAccess.vectorOf(b);
    }

    private static void need(Object o, String name) {
        if (o == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
    }

    private static void sameType(Vector a, Vector b) {
        if (a.type() != b.type()) {
            throw new IllegalArgumentException("input holds " + a.type() + " elements and output " + b.type());
        }
    }

    // ------------------------------------------------------------------ messages

    @Override
    public void deliver(ByteBuf message, Link.Reply reply) {
        messagesReceived.increment();
        bytesReceived.add(message.readableBytes());
        String[] problem = new String[1];
        MessageHeader h;
        try {
            h = MessageHeader.read(message, problem);
        } catch (RuntimeException e) {
            h = null;
            problem[0] = "unreadable header: " + e;
        }
        if (h == null) {
            refuse(message, reply, OperationRun.MALFORMED + problem[0]);
            return;
        }
        if (h.groupId != groupId || h.groupSize != size || h.rank < 0 || h.rank >= size || h.rank == rank) {
            refuse(message, reply, OperationRun.MISMATCH + "rank " + rank + " is in group " + groupId + " of " + size
                    + " ranks; the message came from rank " + h.rank + " of group " + h.groupId + " of " + h.groupSize);
            return;
        }
        OperationRun run;
        String failure = null;
        synchronized (this) {
            run = active.get(h.opSeq);
            if (run == null) {
                if (closed) {
                    failure = OperationRun.FAILED + "the group is closed";
                } else if (h.opSeq >= nextSeq) {
                    if (h.opSeq - nextSeq > MAX_AHEAD) {
                        failure = OperationRun.FAILED + "operation " + h.opSeq + " is too far ahead of rank " + rank + "'s " + nextSeq;
                    } else if (earlyBytes + MessageHeader.LENGTH + message.readableBytes() > options.maxEarlyBytes()
                            || earlyMessages >= MAX_EARLY_MESSAGES) {
                        failure = OperationRun.FAILED + "rank " + rank + " holds " + earlyBytes + " bytes for operations it has not started"
                                + " (maxEarlyBytes " + options.maxEarlyBytes() + ")";
                    } else {
                        int bytes = MessageHeader.LENGTH + message.readableBytes(); // headers count: empty segments are not free
                        earlyBytes += bytes;
                        earlyMessages++;
                        early.computeIfAbsent(h.opSeq, k -> new ArrayList<>()).add(new Early(h, message, bytes));
                        reply.ok();
                        return;
                    }
                } else {
                    failure = recentFailures.get(h.opSeq); // its refusal code, then its message
                    if (failure == null) {
                        // Finished here: a duplicate or a late retransmission.
                        message.release();
                        reply.ok();
                        return;
                    }
                    failure = failure.charAt(0) + "rank " + rank + "'s operation " + h.opSeq + " failed: " + failure.substring(1);
                }
            }
        }
        if (run == null) {
            refuse(message, reply, failure); // its refusal code first
            return;
        }
        run.onMessage(h, message, reply);
    }

    private void refuse(ByteBuf message, Link.Reply reply, String reason) {
        refused.increment();
        ReferenceCountUtil.release(message);
        reply.refuse(reason);
    }

    void countRefused() {
        refused.increment();
    }

    void countSent(int bytes) {
        messagesSent.increment();
        bytesSent.add(bytes);
    }

    synchronized void finished(OperationRun run, String failure) {
        active.remove(run.opSeq);
        if (failure != null) {
            failed.increment();
            recentFailures.put(run.opSeq, failure);
        }
    }

    @Override
    public CollectiveStats stats() {
        return new CollectiveStats(operations.sum(), failed.sum(), messagesSent.sum(), bytesSent.sum(),
                messagesReceived.sum(), bytesReceived.sum(), refused.sum());
    }

    @Override
    public void close() {
        List<OperationRun> running;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            running = new ArrayList<>(active.values());
            for (List<Early> es : early.values()) {
                for (Early e : es) {
                    e.payload.release();
                }
            }
            early.clear();
            earlyBytes = 0;
            earlyMessages = 0;
        }
        for (OperationRun r : running) {
            r.fail(new CollectiveException("the group is closed"));
        }
        link.close();
    }

    @Override
    public String toString() {
        return "CollectiveGroup{rank " + rank + " of " + size + ", " + link + "}";
    }

    private record Early(MessageHeader header, ByteBuf payload, int bytes) {
    }

    private record ScheduleKey(OpDescriptor op, int segmentBytes) {
    }
}
