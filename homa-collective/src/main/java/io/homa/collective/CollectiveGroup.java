package io.homa.collective;

import io.homa.HomaSocket;
import io.homa.collective.internal.Group;
import io.homa.collective.internal.HomaLink;
import io.homa.collective.internal.TcpLink;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A group of N ranks and the collectives over it, in the style of Gloo and MPI: every rank calls the
 * same operations with the same arguments in the same order, and each call completes when this
 * rank's part is done. The same algorithms run over Homa ({@link #overHoma}) and over TCP
 * ({@link #overTcp}), so that the transport is all that differs in a comparison.
 *
 * <pre>{@code
 * HomaSocket socket = HomaSocket.open(HomaConfig.builder().bindAddress(members.get(rank)).build());
 * try (CollectiveGroup group = CollectiveGroup.overHoma(socket, members, rank, CollectiveOptions.defaults())) {
 *     float[] gradients = ...;
 *     group.allReduce(CollectiveBuffer.of(gradients), ReduceOp.SUM).join(); // every rank now has the sums
 * }
 * }</pre>
 *
 * <p><b>Buffers:</b> the caller owns every {@link CollectiveBuffer}; an operation reads and writes
 * it from the call until its future completes (see {@link CollectiveBuffer}).
 *
 * <p><b>Threads:</b> operations may be called from any thread, and several may run at once
 * (overlapped, as data-parallel training overlaps gradient buckets), but every rank must call them
 * in the same order: the n-th call on one rank meets the n-th call on the others. The futures
 * complete on the transport's threads (Homa's handler executor or event loop, TCP's event loop;
 * a Homa group's deadline failures on the JVM's one {@code homa-collective-timer} thread): chain
 * blocking work with the {@code *Async} methods.
 *
 * <p><b>Failures:</b> a future fails with {@link CollectiveTimeoutException} when the operation's
 * deadline ({@link CollectiveOptions#deadline()}) passes (a rank died, stalled or never called),
 * {@link CollectiveMismatchException} when ranks called different operations or lengths,
 * {@link CollectivePeerException} when a message could not be delivered, and
 * {@link CollectiveException} once the group is closed. A failed operation leaves its buffers with
 * unspecified contents; the group stays usable for the next operation. Bad arguments throw
 * {@link IllegalArgumentException} at the call.
 */
public interface CollectiveGroup extends AutoCloseable {
    /**
     * A group whose messages are Homa RPCs on {@code socket} (one request per segment, answered
     * when taken). The group serves the socket (replacing any handler it had), which must be bound
     * to {@code members.get(rank)}. Closing the group does not close the socket.
     *
     * <p>The group's handler never blocks (it combines or copies a segment and answers), so a
     * socket made for a group may run it on its event loop: {@code HomaConfig.builder()
     * .inlineExecution(true)} saves a thread hand-off per segment. On this project's 2-core
     * machine that cut an 8-byte all-reduce over 4 ranks from about 3 ms to about 1 ms
     * (docs/collectives.md). Keep the default if the same socket also serves handlers that block.
     *
     * @param members every rank's socket address, indexed by rank (the same list on every rank)
     * @throws IllegalArgumentException if an argument is null, {@code rank} is out of range, or a
     *         segment's message would exceed the socket's {@code maxMessageLength}
     */
    static CollectiveGroup overHoma(HomaSocket socket, List<InetSocketAddress> members, int rank,
                                    CollectiveOptions options) {
        Group.check(members, rank, options);
        if (socket == null) {
            throw new IllegalArgumentException("socket must not be null");
        }
        int largest = options.segmentBytes() + io.homa.collective.internal.MessageHeader.LENGTH;
        if (largest > socket.config().maxMessageLength()) {
            throw new IllegalArgumentException("a segment's message (" + options.segmentBytes() + " + 48 header bytes) exceeds"
                    + " the socket's maxMessageLength " + socket.config().maxMessageLength()
                    + ": lower CollectiveOptions.segmentBytes or raise HomaConfig.maxMessageLength");
        }
        return new Group(new HomaLink(socket, members, rank), members.size(), rank, options);
    }

    /**
     * A group over TCP: this rank listens on {@code members.get(rank)} and connects to each peer's
     * address when it first sends to it (retrying until the deadline while the peer is not yet
     * listening). Each segment is a length-prefixed frame, answered by a frame of its own, so the
     * messages and acknowledgements are those of {@link #overHoma}. Closing the group closes its
     * connections.
     *
     * @throws IllegalArgumentException if an argument is null or {@code rank} is out of range
     * @throws java.io.UncheckedIOException if the address cannot be bound
     */
    static CollectiveGroup overTcp(List<InetSocketAddress> members, int rank, CollectiveOptions options) {
        Group.check(members, rank, options);
        return new Group(new TcpLink(members, rank), members.size(), rank, options);
    }

    /** This rank's number, 0 to {@link #size()} - 1. */
    int rank();

    /** The number of ranks. */
    int size();

    /**
     * Combines {@code data} element-wise across the ranks; every rank ends with the result in its
     * {@code data}. Ring or halving-doubling by {@link CollectiveOptions#algorithm()}.
     */
    CompletableFuture<Void> allReduce(CollectiveBuffer data, ReduceOp op);

    default CompletableFuture<Void> allReduce(float[] data, ReduceOp op) {
        return allReduce(CollectiveBuffer.of(data), op);
    }

    default CompletableFuture<Void> allReduce(double[] data, ReduceOp op) {
        return allReduce(CollectiveBuffer.of(data), op);
    }

    default CompletableFuture<Void> allReduce(int[] data, ReduceOp op) {
        return allReduce(CollectiveBuffer.of(data), op);
    }

    default CompletableFuture<Void> allReduce(long[] data, ReduceOp op) {
        return allReduce(CollectiveBuffer.of(data), op);
    }

    /**
     * Combines {@code input} across the ranks and leaves this rank's block of the result in
     * {@code output}: block {@code r} of L elements over n ranks starts at {@code r*(L/n) + min(r, L%n)}
     * and has {@code L/n} elements, one more if {@code r < L%n}. {@code input} is used as scratch
     * space (its contents afterwards are unspecified).
     *
     * @throws IllegalArgumentException if the types differ or {@code output} is not this rank's block's length
     */
    CompletableFuture<Void> reduceScatter(CollectiveBuffer input, CollectiveBuffer output, ReduceOp op);

    /**
     * Gathers every rank's {@code input} into {@code output}, rank r's at block r (as
     * {@link #reduceScatter} lays blocks out).
     *
     * @throws IllegalArgumentException if the types differ or {@code input} is not this rank's block's length
     */
    CompletableFuture<Void> allGather(CollectiveBuffer input, CollectiveBuffer output);

    /** Copies the root's {@code data} into every rank's (binomial tree; a pipelined chain for large data). */
    CompletableFuture<Void> broadcast(CollectiveBuffer data, int root);

    /** Completes once every rank has called it (dissemination barrier, ceil(log2 n) rounds). */
    CompletableFuture<Void> barrier();

    CollectiveStats stats();

    /** Fails the operations still running with {@link CollectiveException} and stops the transport (not a caller's socket). */
    @Override
    void close();
}
