package io.homa;

import io.homa.core.ReceivedMessage;
import io.netty.buffer.ByteBuf;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Function;

/**
 * One call in flight: what to send, until when, and the future to complete. Made on the caller's
 * thread; its {@code rpcId} and {@code timer} are touched only by the event loop that runs it.
 *
 * @param <T> the response type ({@code byte[]} or {@code ByteBuf})
 */
final class ClientCall<T> {
    final InetSocketAddress server;
    /**
     * The request bytes between position and limit, read by the engine until the RPC ends; null
     * when {@link #owner} has several parts (a composite), which the engine then reads in place.
     */
    final ByteBuffer payload;
    /** The request's length in bytes. */
    final int length;
    /** The buffer behind {@link #payload} that the socket must release, or null (a byte[] request). */
    final ByteBuf owner;
    final Duration deadline;
    /** {@link System#nanoTime()} at which the deadline passes. */
    final long deadlineNanos;
    final CompletableFuture<T> future = new CompletableFuture<>();
    /** {@link System#nanoTime()} when the call was made: its latency for listeners and JFR. */
    final long startedNanos = System.nanoTime();
    private final Function<ReceivedMessage, T> decode;

    /** The engine's id for this RPC; 0 until started. */
    long rpcId;
    /** The deadline timer on the event loop, or null. */
    ScheduledFuture<?> timer;
    /** TCP fallback: when the engine took the call ({@link System#nanoTime()}); event loop only. */
    long launchedAt;
    /** TCP fallback: the timer that retries the call over TCP if its server stays silent, or null. */
    ScheduledFuture<?> probe;
    /** TCP fallback: the server refused the TCP retry, having received the request over Homa. */
    boolean fallbackRefused;
    /** 1 once {@link #owner} was released; a field and an updater, not an object per call. */
    @SuppressWarnings("unused") // written through OWNER_RELEASED
    private volatile int ownerReleased;
    @SuppressWarnings("rawtypes")
    private static final AtomicIntegerFieldUpdater<ClientCall> OWNER_RELEASED =
            AtomicIntegerFieldUpdater.newUpdater(ClientCall.class, "ownerReleased");

    ClientCall(InetSocketAddress server, ByteBuffer payload, ByteBuf owner, Duration deadline,
               long deadlineNanos, Function<ReceivedMessage, T> decode) {
        this.server = server;
        this.payload = payload;
        this.owner = owner;
        this.length = payload != null ? payload.remaining() : owner.readableBytes();
        this.deadline = deadline;
        this.deadlineNanos = deadlineNanos;
        this.decode = decode;
    }

    /**
     * Completes the future with the response (on the user-code executor), which takes over its
     * memory; a response nobody takes (the future was completed or cancelled meanwhile) is released.
     */
    void succeed(ReceivedMessage response) {
        T value = decode.apply(response);
        if (!future.complete(value)) {
            ReferenceCountUtil.release(value);
        }
    }

    /** Completes the future exceptionally. */
    void fail(HomaException e) {
        future.completeExceptionally(e);
    }

    void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
        if (probe != null) {
            probe.cancel(false);
            probe = null;
        }
    }

    /**
     * Releases {@link #owner} unless that happened already (any thread): for a call no engine
     * took, whose buffer is therefore still the socket's (once an engine took it, the engine's
     * release listener frees it instead).
     */
    void releaseOwner() {
        if (owner != null && OWNER_RELEASED.compareAndSet(this, 0, 1)) {
            ReferenceCountUtil.safeRelease(owner);
        }
    }

    @Override
    public String toString() {
        return "call " + Long.toUnsignedString(rpcId, 16) + " to " + server + " (" + length + " B)";
    }
}
