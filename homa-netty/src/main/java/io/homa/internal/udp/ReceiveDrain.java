package io.homa.internal.udp;

import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;
import io.homa.internal.observe.ShellCounter;
import io.netty.buffer.ByteBuf;
import io.netty.channel.socket.DatagramPacket;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

/**
 * SRPT on the host, for the datagrams one event loop reads: control packets and DATA of short
 * messages go to the engine as they are read (but a RESEND read after held DATA, which waits
 * behind it: see {@link #offer}); large datagrams of long messages wait until the
 * loop has read every socket that was ready in this I/O round (all its priority sockets, and a
 * TCP fallback channel on the same loop), so a 100 B request never waits in our own process behind
 * the copying of 64 KB datagrams read before it.
 *
 * <p>The class is judged from the Homa header alone (no decoding, nothing trusted): a datagram is
 * <em>bulk</em> when it says it is DATA of a message longer than {@code shortMessageBytes} and it
 * is at least {@code minBulkDatagramBytes} long; anything else, malformed datagrams included, is
 * urgent (the engine then drops what is bad). The size floor is there because waiting has a price
 * (a task, and a second drain and flush in a round that also had urgent datagrams) that only a
 * large datagram's processing repays: an MTU-sized datagram costs the engine a copy of 1.5 KB at
 * most, less than its deferral, and on the 1,500-byte testbed deferring every one of them made
 * the hosts late (docs/benchmarks.md, "The testbed regression"). The
 * receiver cannot see the IP TOS the sender chose, but Homa's sender picks an unscheduled
 * priority from the message length, so the length is the same signal. Handing the engine DATA
 * after control packets that were read later is a reordering UDP may do anyway; the protocol copes.
 *
 * <p>The deferred datagrams go to the engine, oldest first, in a task that runs after the loop's
 * current I/O round (a Netty loop runs its tasks between rounds of reads), then
 * {@code afterDeferred} runs (the loop drains the engine). The deferral is bounded: when more than
 * {@code maxDeferredBytes} of bulk datagrams wait, the oldest go to the engine at once, so memory
 * stays bounded and nothing waits longer than one round.
 *
 * <p>Buffers: {@link #offer} takes ownership of the packet; it is passed on to {@code engine}
 * exactly once, which releases it, or released by {@link #close()}. Confined to the event loop,
 * but for {@link #holding()}, which a thread in its turn at the engine (under the engine lock)
 * may ask too.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class ReceiveDrain {
    /**
     * Bulk bytes held back at most: one full receive buffer (Transport's MAX_READ_BUFFER), so the
     * held memory stays within a few of the loop's read buffers. A round size, not a measured optimum.
     */
    public static final int MAX_DEFERRED_BYTES = 1 << 20;
    /**
     * Smallest datagram worth deferring: 16 KiB, where copying its payload (a few microseconds)
     * outweighs the deferral's task, drain and flush; the size at which zero-copy send starts
     * paying off too. Below it (any MTU up to jumbo frames) nothing is deferred.
     */
    public static final int MIN_BULK_DATAGRAM_BYTES = 16 * 1024;

    private final Consumer<DatagramPacket> engine;
    private final Executor loop;
    private final Runnable afterDeferred;
    private final int shortMessageBytes;
    private final int minBulkDatagramBytes;
    private final int maxDeferredBytes;
    private final long[] shell;
    private final ArrayDeque<DatagramPacket> deferred = new ArrayDeque<>();
    private final Runnable finishTask = this::finish;
    private int deferredBytes;
    private boolean finishQueued;
    private boolean closed;

    /**
     * @param engine            takes each datagram in the order chosen here (and releases it)
     * @param loop              runs the deferred datagrams' task after the current I/O round
     * @param afterDeferred     runs after the deferred datagrams went to {@code engine}
     * @param shortMessageBytes DATA of messages up to this long is urgent
     * @param minBulkDatagramBytes datagrams shorter than this are urgent
     * @param maxDeferredBytes  bulk bytes held back at most
     * @param shell             the loop's shell counters (RECEIVE_DEFERRED is counted here)
     */
    public ReceiveDrain(Consumer<DatagramPacket> engine, Executor loop, Runnable afterDeferred, int shortMessageBytes,
                 int minBulkDatagramBytes, int maxDeferredBytes, long[] shell) {
        this.engine = engine;
        this.loop = loop;
        this.afterDeferred = afterDeferred;
        this.shortMessageBytes = shortMessageBytes;
        this.minBulkDatagramBytes = minBulkDatagramBytes;
        this.maxDeferredBytes = maxDeferredBytes;
        this.shell = shell;
    }

    /** A datagram just read (ownership passes here). */
    public void offer(DatagramPacket p) {
        if (closed || p.content().readableBytes() < minBulkDatagramBytes || !isBulk(p.content(), shortMessageBytes)) {
            if (closed || deferred.isEmpty() || !isResend(p.content())) {
                engine.accept(p);
                return;
            }
            // A RESEND waits behind the held DATA, in the order read (not counted as deferred
            // DATA): a client asks about an RPC whose first request DATA may be among them, and
            // a server that heard the question first would not know the RPC yet and tell the
            // client to start its request over.
        } else {
            shell[ShellCounter.RECEIVE_DEFERRED.ordinal()]++;
        }
        deferred.addLast(p);
        deferredBytes += p.content().readableBytes();
        while (deferredBytes > maxDeferredBytes) {
            handOldest();
        }
        if (!finishQueued && !deferred.isEmpty()) {
            finishQueued = true;
            try {
                loop.execute(finishTask);
            } catch (RejectedExecutionException e) { // the loop is shutting down: no later round
                finish();
            }
        }
    }

    /** How many datagrams wait (for tests). */
    int deferred() {
        return deferred.size();
    }

    /**
     * Whether datagrams already read wait here for the end of the round: until they reach the
     * engine, its view of which RPCs were silent is older than what the loop has read.
     */
    public boolean holding() {
        return !deferred.isEmpty();
    }

    /** The I/O round is over: the deferred datagrams go to the engine, then the loop drains it. */
    private void finish() {
        finishQueued = false;
        if (deferred.isEmpty()) {
            return;
        }
        while (!deferred.isEmpty()) {
            handOldest();
        }
        afterDeferred.run();
    }

    private void handOldest() {
        DatagramPacket p = deferred.removeFirst();
        deferredBytes -= p.content().readableBytes();
        engine.accept(p);
    }

    /** Releases whatever still waits; later datagrams go straight to {@code engine}. On the loop. */
    public void close() {
        closed = true;
        DatagramPacket p;
        while ((p = deferred.pollFirst()) != null) {
            p.release();
        }
        deferredBytes = 0;
    }

    /** Whether {@code datagram} says it is a RESEND. */
    static boolean isResend(ByteBuf datagram) {
        return says(datagram, PacketType.RESEND, WireFormat.COMMON_HEADER);
    }

    /** Whether {@code datagram}, at least {@code header} bytes long, has Homa's magic and {@code type}. */
    private static boolean says(ByteBuf datagram, PacketType type, int header) {
        int at = datagram.readerIndex();
        return datagram.readableBytes() >= header
                && datagram.getUnsignedShort(at + WireFormat.OFF_MAGIC) == WireFormat.MAGIC
                && datagram.getUnsignedByte(at + WireFormat.OFF_TYPE) == type.code;
    }

    /** Whether {@code datagram} says it is DATA of a message longer than {@code shortMessageBytes}. */
    static boolean isBulk(ByteBuf datagram, int shortMessageBytes) {
        return says(datagram, PacketType.DATA, WireFormat.DATA_HEADER)
                && datagram.getUnsignedInt(datagram.readerIndex() + WireFormat.DATA_OFF_MESSAGE_LENGTH) > shortMessageBytes;
    }
}
