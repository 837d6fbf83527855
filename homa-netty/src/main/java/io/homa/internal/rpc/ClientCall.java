package io.homa.internal.rpc;

import io.homa.core.ReceivedMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Function;

/**
 * One call in flight: what to send, until when, and the future to complete. Made on the caller's
 * thread; its {@code rpcId} and deadline slot are touched only by the event loop that runs it.
 * It is also the command that starts it on that loop ({@link #run}) and its entry in the loop's
 * {@link DeadlineQueue}, so that a call costs no lambda or timer task of its own. And it is the
 * future its caller holds: cancelling that aborts the RPC, and a waiting thread may read its own
 * response ({@link Runner#awaiting}); overrides of the future's methods, not completion stages,
 * which would cost objects per call (so would a future of its own: 24 B per call).
 *
 * <p>Internal use only. The fields that are not final belong to the event loop that runs the call.
 *
 * @param <T> the response type ({@code byte[]} or {@code ByteBuf})
 */
public final class ClientCall<T> extends CompletableFuture<T> implements Runnable, DeadlineQueue.Entry, UserPayload {
    /** What runs a call over Homa: an engine loop, seen only through what a call asks of it. */
    public interface Runner {
        /** Queues {@code c} to start on the loop (any thread): the command is {@code c} itself. */
        void call(ClientCall<?> c);

        /** Starts {@code c} (on the loop). */
        void start(ClientCall<?> c);

        /** The caller cancelled {@code c}'s future (any thread). */
        void cancel(ClientCall<?> c);

        /** {@code c}'s deadline passed (on the loop). */
        void deadlinePassed(ClientCall<?> c);

        /**
         * A thread is about to wait for {@code c}'s future (any thread): the runner may have it
         * read and handle the response itself for a while, returning early once the future is done
         * and never later than {@code timeoutNanos} from now.
         */
        default void awaiting(ClientCall<?> c, long timeoutNanos) {
        }

        /**
         * {@code c}'s future completed (any thread, after the completion), while a thread was
         * waiting for it ({@link #waitedOnBy}): the runner wakes that thread if it sleeps where
         * the future's own wake-up cannot reach it.
         */
        default void finished(ClientCall<?> c) {
        }

        /**
         * {@code c}'s future is about to be completed by a thread other than the one reading for
         * it (any thread, before the completion): the runner sends that thread back to the
         * future's own wait, so that it is woken before the stages the completion runs, as a
         * parked {@code get()} is.
         */
        default void finishing(ClientCall<?> c) {
        }
    }

    public final InetSocketAddress server;
    /**
     * The request, read by the engine in place until the RPC ends: the {@code byte[]} of a
     * {@code byte[]} call, or the {@code ByteBuf} of a {@code ByteBuf} call, which the socket must
     * release. One field for either (a call is an object per RPC: see {@link #flags}).
     */
    private final Object request;
    /** The request's length in bytes. */
    public final int length;
    public final Duration deadline;
    /** {@link System#nanoTime()} at which the deadline passes. */
    public final long deadlineNanos;
    /** The longest deadline in nanoseconds (about 73 years): now plus it cannot overflow. */
    private static final long MAX_DEADLINE_NANOS = Long.MAX_VALUE / 4;
    private final Function<ReceivedMessage, T> decode;

    /** The engine loop that runs the call over Homa; null until it is handed to one. */
    private volatile Runner loop;
    /** The engine's id for this RPC; 0 until started. */
    public long rpcId;
    /** Place in the loop's {@link DeadlineQueue} (-1: not there). */
    private int deadlineSlot = -1;
    /** The TCP fallback's watch of the call (HomaConfig.tcpFallback), or null: an object only when the fallback is on. */
    public Fallback fallback;
    /**
     * The thread that waits for the future and reads the response itself (HomaConfig.callerSpin,
     * callerReads), or null: written by that thread alone, read by whoever completes the future.
     */
    private volatile Thread waiter;
    /**
     * The response (a {@link ReceivedMessage}) or failure (a {@link RuntimeException}) made in the
     * waiter's own turn, for it to complete with after its wait; the waiter's alone.
     */
    private Object pending;
    private static final java.util.concurrent.atomic.AtomicReferenceFieldUpdater<ClientCall, Thread> WAITER =
            java.util.concurrent.atomic.AtomicReferenceFieldUpdater.newUpdater(ClientCall.class, Thread.class, "waiter");
    /**
     * Flags: {@link #IDEMPOTENT}, set when made; then each set once by compare-and-set:
     * {@link #OWNER_RELEASED} once a {@code ByteBuf} request was released, {@link #FORGOTTEN} once
     * {@link CallsInFlight#forget} took the call (whoever did completes it). One int and an
     * updater, not an object per call, and not a boolean beside it (a byte that made a call 8
     * bytes longer).
     */
    private volatile int flags;
    @SuppressWarnings("rawtypes")
    private static final AtomicIntegerFieldUpdater<ClientCall> FLAGS =
            AtomicIntegerFieldUpdater.newUpdater(ClientCall.class, "flags");
    private static final int OWNER_RELEASED = 1;
    private static final int FORGOTTEN = 2;
    /** The request may run twice: sent again even when the server may have run it (see CallOptions). */
    private static final int IDEMPOTENT = 4;

    /** The call below this one in the socket's {@link CallsInFlight}, and this one's depth there. */
    ClientCall<?> nextInFlight;
    int depthInFlight;

    /** {@code deadline} in nanoseconds, at most {@link #MAX_DEADLINE_NANOS}: a call's deadline is now plus this. */
    public static long cappedNanos(Duration deadline) {
        if (deadline.getSeconds() >= MAX_DEADLINE_NANOS / 1_000_000_000L) {
            return MAX_DEADLINE_NANOS; // before toNanos(), which would overflow beyond 292 years
        }
        return Math.min(deadline.toNanos(), MAX_DEADLINE_NANOS);
    }

    /**
     * {@link System#nanoTime()} when the call was made (its latency for listeners and JFR): its
     * deadline was computed then, {@code deadlineNanos = start + cappedNanos(deadline)}, so it is
     * derived rather than a field of its own (a call is 88 bytes with it derived, 96 with it kept).
     */
    public long startedNanos() {
        return deadlineNanos - cappedNanos(deadline);
    }

    /**
     * A call sending {@code bytes} or, if that is null, {@code owner}'s readable bytes, made when
     * {@code deadlineNanos - cappedNanos(deadline)} was {@link System#nanoTime()}.
     */
    public ClientCall(InetSocketAddress server, byte[] bytes, ByteBuf owner, Duration deadline,
               long deadlineNanos, boolean idempotent, Function<ReceivedMessage, T> decode) {
        this.flags = idempotent ? IDEMPOTENT : 0;
        this.server = server;
        this.request = bytes != null ? bytes : owner;
        this.length = bytes != null ? bytes.length : owner.readableBytes();
        this.deadline = deadline;
        this.deadlineNanos = deadlineNanos;
        this.decode = decode;
    }

    /**
     * Completes the future with the response (on the user-code executor), which takes over its
     * memory; a response nobody takes (the future was completed or cancelled meanwhile) is released.
     */
    public void succeed(ReceivedMessage response) {
        T value = decode.apply(response);
        if (!complete(value)) {
            ReferenceCountUtil.release(value);
        }
    }

    /**
     * A {@code byte[]} call's response is wanted as one array: the engine assembles one of up to
     * {@code OutgoingPayload.MAX_RESPONSE_ARRAY} bytes in it (from an eighth received on), and the
     * call hands that array over without copying it again.
     */
    @Override
    public boolean responseAsArray() {
        return request instanceof byte[];
    }

    /** Completes the future exceptionally (with the API's exception for the failure). */
    public void fail(RuntimeException e) {
        completeExceptionally(e);
    }

    /**
     * The calling thread becomes the one that waits for the future reading the response itself
     * (true), unless another thread is (false: this one parks as usual). Then {@link #releaseWaiter}.
     */
    public boolean claimWaiter() {
        return WAITER.compareAndSet(this, null, Thread.currentThread());
    }

    /** The waiting thread stops reading (the one that claimed it). */
    public void releaseWaiter() {
        WAITER.compareAndSet(this, Thread.currentThread(), null);
    }

    /** Whether {@code t} waits for the future and reads the response itself. */
    public boolean waitedOnBy(Thread t) {
        return waiter == t;
    }

    /**
     * The waiter's own turn ended the call: it completes the future itself once the turn is over
     * ({@link #completeDeferred}), so that stages chained on it never run under the engine lock
     * and the completion needs no executor thread. Exactly one of the two is non-null.
     */
    public void deferCompletion(ReceivedMessage response, RuntimeException failure) {
        pending = response != null ? response : failure;
    }

    /**
     * Whether the call has ended: its future is done, or its waiter has the completion to make
     * ({@link #deferCompletion}). The waiter's, or under the engine lock after the engine's events
     * were drained.
     */
    public boolean ended() {
        return isDone() || pending != null;
    }

    /** Completes the future with what {@link #deferCompletion} kept, if anything (the waiter, once it stopped reading). */
    public void completeDeferred() {
        Object p = pending;
        pending = null;
        if (p instanceof ReceivedMessage response) {
            succeed(response);
        } else if (p instanceof RuntimeException failure) {
            fail(failure);
        }
    }

    /**
     * Hands the call to {@code loop} to run over Homa (any thread). A future cancelled before (while
     * the call went over TCP) aborts it there too.
     */
    public void startOn(Runner loop) {
        this.loop = loop;
        if (isCancelled()) {
            loop.cancel(this);
        }
        loop.call(this);
    }

    /** Starts the call on its loop: the command {@link Runner#call} queues. */
    @Override
    public void run() {
        loop.start(this);
    }

    @Override
    public long deadlineNanos() {
        return deadlineNanos;
    }

    @Override
    public int deadlineSlot() {
        return deadlineSlot;
    }

    @Override
    public void deadlineSlot(int slot) {
        deadlineSlot = slot;
    }

    @Override
    public void deadlinePassed() {
        loop.deadlinePassed(this);
    }

    /** Cancels the TCP fallback's probe, if any (on the loop). */
    public void cancelProbe() {
        Fallback f = fallback;
        if (f != null && f.probe != null) {
            f.probe.cancel(false);
            f.probe = null;
        }
    }

    /** Whether the server refused the call's TCP retry, having received the request over Homa; event loop only. */
    public boolean fallbackRefused() {
        return fallback != null && fallback.refused;
    }

    /** What the TCP fallback keeps of a call it watches; event loop only. */
    public static final class Fallback {
        /** When the engine took the call ({@link System#nanoTime()}). */
        public long launchedAt;
        /** The timer that retries the call over TCP if its server stays silent, or null. */
        public ScheduledFuture<?> probe;
        /** The server refused the TCP retry, having received the request over Homa. */
        public boolean refused;
    }

    // The request as the engine reads it (UserPayload): no view object per call.

    @Override
    public byte[] payloadBytes() {
        return request instanceof byte[] b ? b : null;
    }

    @Override
    public ByteBuf payloadBuffer() {
        return request instanceof ByteBuf b ? b : null;
    }

    /** The request may run twice: sent again even when the server may have run it (see CallOptions). */
    public boolean idempotent() {
        return (flags & IDEMPOTENT) != 0;
    }

    @Override
    public void releasePayload() {
        releaseOwner();
    }

    /** The request as a buffer of its own for a TCP attempt (a retained duplicate, or the array wrapped). */
    public ByteBuf requestForTcp() {
        return request instanceof ByteBuf b ? b.retainedDuplicate() : Unpooled.wrappedBuffer((byte[]) request);
    }

    /** Marks the call forgotten; true for the first caller only ({@link CallsInFlight#forget}). */
    boolean markForgotten() {
        return setFlag(FORGOTTEN);
    }

    boolean forgotten() {
        return (flags & FORGOTTEN) != 0;
    }

    /** Sets {@code flag}; true if this call set it (it was clear). */
    private boolean setFlag(int flag) {
        for (;;) {
            int f = flags;
            if ((f & flag) != 0) {
                return false;
            }
            if (FLAGS.compareAndSet(this, f, f | flag)) {
                return true;
            }
        }
    }

    /**
     * Releases a {@code ByteBuf} request unless that happened already (any thread): for a call no engine
     * took, when the engine stops reading it ({@link #releasePayload}), or at close; whichever
     * comes first releases it, the others do nothing.
     */
    public void releaseOwner() {
        if (request instanceof ByteBuf b && setFlag(OWNER_RELEASED)) {
            ReferenceCountUtil.safeRelease(b);
        }
    }

    // The future's methods. A cancellation (by cancel, or by completing with a
    // CancellationException) aborts the RPC.

    /** A waiting thread first lets its loop have it read its own response (HomaConfig.callerSpin). */
    @Override
    public T get() throws InterruptedException, ExecutionException {
        awaitBriefly(Long.MAX_VALUE);
        return super.get();
    }

    @Override
    public T get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException, TimeoutException {
        long nanos = unit.toNanos(timeout);
        if (isDone() || loop == null) {
            return super.get(nanos, TimeUnit.NANOSECONDS);
        }
        long start = System.nanoTime();
        awaitBriefly(nanos);
        return super.get(Math.max(0, nanos - (System.nanoTime() - start)), TimeUnit.NANOSECONDS);
    }

    @Override
    public T join() {
        awaitBriefly(Long.MAX_VALUE);
        return super.join();
    }

    /** Lets the call's runner have this thread read its own response, for at most {@code timeoutNanos}. */
    private void awaitBriefly(long timeoutNanos) {
        Runner l = loop;
        if (l != null && !isDone()) {
            l.awaiting(this, timeoutNanos);
        }
    }

    @Override
    public boolean complete(T value) {
        beforeFinish();
        boolean completed = super.complete(value);
        onFinished();
        return completed;
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        beforeFinish();
        boolean cancelled = super.cancel(mayInterruptIfRunning);
        onFinished();
        onCancelled();
        return cancelled;
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
        beforeFinish();
        boolean completed = super.completeExceptionally(ex);
        onFinished();
        if (ex instanceof CancellationException) {
            onCancelled();
        }
        return completed;
    }

    /** Before another thread completes the future: the thread reading for it goes back to the future's own wait. */
    private void beforeFinish() {
        Runner l = loop;
        Thread w = waiter;
        if (l != null && w != null && w != Thread.currentThread() && !isDone()) {
            l.finishing(this);
        }
    }

    /** After the future completed: a thread waiting for it where an unpark cannot reach it is woken. */
    private void onFinished() {
        Runner l = loop;
        if (l != null && waiter != null) {
            l.finished(this);
        }
    }

    private void onCancelled() {
        Runner l = loop;
        if (l != null && isCancelled()) {
            l.cancel(this);
        }
    }

    /** The call, as failure messages name it (not the future's state). */
    @Override
    public String toString() {
        return "call " + Long.toUnsignedString(rpcId, 16) + " to " + server + " (" + length + " B)";
    }
}
