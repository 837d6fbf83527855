package io.homa.grpc;

import io.grpc.Compressor;
import io.grpc.Deadline;
import io.grpc.Status;
import io.grpc.SynchronizationContext;
import io.grpc.internal.Stream;
import io.homa.CallOptions;
import io.homa.HomaSocket;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * What client and server streams share: the lock, the {@link Inbound} and {@link Outbound}
 * halves, the listener calls (queued under the lock on a {@link SynchronizationContext}, run in
 * order after it is released), and sending frames as Homa RPCs with their replies checked.
 *
 * <p>Every public method of a stream takes the lock, changes state and queues work, then calls
 * {@link #afterLock()}, which runs the queued listener calls and sends the queued frames outside
 * the lock (a failed send re-enters the stream).
 */
abstract class StreamBase implements Stream {
    private static final Logger log = LoggerFactory.getLogger(StreamBase.class);
    /** The Homa deadline of frames of a call without a gRPC deadline; a silent peer still fails it (timeoutTicks). */
    static final Duration NO_DEADLINE = Duration.ofDays(1);

    final long id;
    final SynchronizationContext sync = new SynchronizationContext(
            (t, e) -> log.error("a gRPC stream listener threw", e));
    /** Guarded by {@code this}: frames to send, each holding the reference the socket takes over. */
    private final List<ByteBuf> sends = new ArrayList<>();
    /** Guarded by {@code this}: calls into the transport, which must not run under the stream's lock. */
    private final List<Runnable> afterLock = new ArrayList<>(1);
    /** Guarded by {@code this}: the stream is over for this side (listener told, or about to be). */
    boolean closed;

    StreamBase(long id) {
        this.id = id;
    }

    abstract HomaSocket socket();

    abstract InetSocketAddress peer();

    /** The call's deadline, or null. */
    abstract Deadline deadline();

    /** Ends the stream because of a transport failure (lock not held); idempotent. */
    abstract void fail(Status status);

    /** The peer answered UNKNOWN_STREAM to one of our frames. */
    void peerForgot() {
        fail(Status.UNAVAILABLE.withDescription("the peer " + peer() + " does not know stream " + id));
    }

    /** The peer took a frame of {@code type} (ACK), or answered a unary OPEN (RESULT). */
    void accepted(int type, Frame.Reply reply) {
        if (reply.code != Frame.Reply.ACK) {
            fail(Status.INTERNAL.withDescription("a result in reply to a " + Frame.typeName(type) + " frame"));
        }
    }

    /** The Homa RPC of the stream's OPEN frame, once sent (a client cancels it with the stream). */
    volatile CompletableFuture<ByteBuf> openCall;

    /** Queues a frame to send after the lock is released. Call with the lock held. */
    final void queueSend(byte[] frame) {
        sends.add(Unpooled.wrappedBuffer(frame));
    }

    /** Queues a frame to send after the lock is released; takes it over. Call with the lock held. */
    final void queueSend(ByteBuf frame) {
        sends.add(frame);
    }

    /** Queues the frames the outbound half lets go now. Call with the lock held. */
    final void pump(Outbound outbound) {
        outbound.pump(sends);
    }

    /**
     * Queues a call into the transport for after the lock is released: the transport may tell
     * gRPC that it terminated, and gRPC may then close the Homa socket, which waits for the
     * socket's threads, one of which may be waiting for this stream's lock. Call with the lock held.
     */
    final void queueAfterLock(Runnable r) {
        afterLock.add(r);
    }

    /** Runs the queued listener calls and transport calls, then sends the queued frames. Call without the lock. */
    final void afterLock() {
        sync.drain();
        // One frame and at most one call (a unary call's every turn) are taken without copying the lists.
        ByteBuf oneFrame = null;
        List<ByteBuf> frames = null;
        Runnable oneCall = null;
        List<Runnable> calls = null;
        synchronized (this) {
            if (sends.size() == 1) {
                oneFrame = sends.remove(0);
            } else if (!sends.isEmpty()) {
                frames = new ArrayList<>(sends);
                sends.clear();
            }
            if (afterLock.size() == 1) {
                oneCall = afterLock.remove(0);
            } else if (!afterLock.isEmpty()) {
                calls = new ArrayList<>(afterLock);
                afterLock.clear();
            }
        }
        if (oneFrame != null) {
            send(oneFrame);
        } else if (frames != null) {
            for (ByteBuf frame : frames) {
                send(frame);
            }
        }
        if (oneCall != null) {
            oneCall.run();
        } else if (calls != null) {
            calls.forEach(Runnable::run);
        }
    }

    /** Whether this stream's OPEN may run twice (a client stream of an idempotent method); false here. */
    boolean idempotentOpen() {
        return false;
    }

    /** The Homa deadline for one frame: what is left of the call's deadline. */
    final Duration homaDeadline() {
        Deadline d = deadline();
        if (d == null) {
            return NO_DEADLINE;
        }
        return Duration.ofNanos(Math.max(TimeUnit.MILLISECONDS.toNanos(1), d.timeRemaining(TimeUnit.NANOSECONDS)));
    }

    /** Sends one frame as a Homa RPC (the socket takes it over) and checks the reply. */
    private void send(ByteBuf frame) {
        int type = Frame.typeOf(frame);
        Duration timeout = homaDeadline();
        try {
            // An OPEN of an idempotent method may be sent again to a server that restarted; any
            // other frame then fails the stream as processed (its outcome unknown).
            CompletableFuture<ByteBuf> call = type == Frame.OPEN && idempotentOpen()
                    ? socket().call(peer(), frame, CallOptions.DEFAULT.withDeadline(timeout).withIdempotent(true))
                    : socket().call(peer(), frame, timeout);
            if (type == Frame.OPEN) {
                openCall = call;
            }
            call.whenComplete((reply, error) -> {
                try {
                    if (error != null) {
                        if (type != Frame.CANCEL) {
                            failedSend(type, error, timeout == NO_DEADLINE ? Frame.NO_TIMEOUT : timeout.toNanos());
                        }
                    } else {
                        onReply(type, reply);
                    }
                } catch (Throwable t) {
                    // whenComplete's own future is never read: without this a bug here would
                    // vanish and leave the stream open until its deadline.
                    replyHandlingFailed(type, t);
                }
            });
        } catch (RuntimeException e) { // a closed socket, a message over the Homa limit
            fail(Failures.toStatus(e, deadline()));
        }
    }

    /** Handling the outcome of a frame of {@code type} threw {@code t} (a bug of ours): logged, and the stream ends. */
    final void replyHandlingFailed(int type, Throwable t) {
        log.error("stream {}: handling the reply to a {} frame from {} threw", id, Frame.typeName(type), peer(), t);
        try {
            fail(Status.INTERNAL.withDescription("the transport failed handling a " + Frame.typeName(type)
                    + " frame's reply: " + t).withCause(t));
        } catch (Throwable again) {
            log.error("stream {}: ending it after that failed too", id, again);
        }
    }

    /**
     * A frame of {@code type}, sent with {@code sentTimeoutNanos} of the call's deadline left
     * ({@link Frame#NO_TIMEOUT} for none), failed as a Homa RPC: ends the stream with the status of
     * the failure. A client stream whose OPEN the server refused unrun says so to gRPC (a refused stream).
     */
    void failedSend(int type, Throwable error, long sentTimeoutNanos) {
        fail(Failures.toStatus(error, deadline()));
    }

    /** Checks the reply to a frame of {@code type}; releases it. */
    private void onReply(int type, ByteBuf bytes) {
        Frame.Reply reply;
        try {
            reply = Frame.Reply.decode(bytes);
        } catch (Frame.Malformed e) {
            fail(Status.INTERNAL.withDescription("malformed reply from " + peer() + ": " + e.getMessage()));
            return;
        } finally {
            bytes.release(); // a RESULT's messages hold references of their own
        }
        try {
            onReply(type, reply);
        } finally {
            reply.release(); // the messages nobody took
        }
    }

    private void onReply(int type, Frame.Reply reply) {
        switch (reply.code) {
            case Frame.Reply.ACK:
            case Frame.Reply.RESULT:
                accepted(type, reply);
                break;
            case Frame.Reply.UNKNOWN_STREAM:
                peerForgot();
                break;
            case Frame.Reply.REFUSED:
                fail(Status.UNAVAILABLE.withDescription("the server " + peer() + " is shutting down"));
                break;
            case Frame.Reply.BAD_FRAME:
                fail(reply.status.augmentDescription("the peer " + peer() + " could not read our frame"));
                break;
            default:
                fail(Status.INTERNAL.withDescription("unexpected reply code " + reply.code + " from " + peer()));
                break;
        }
    }

    /** Frames leave as soon as they are written: nothing to flush. */
    @Override
    public final void flush() {
    }

    @Override
    public final void optimizeForDirectExecutor() {
    }

    /** Messages are never compressed (docs/grpc.md). */
    @Override
    public final void setCompressor(Compressor compressor) {
    }

    @Override
    public final void setMessageCompression(boolean enable) {
    }

    /** The status of a message over the receiver's {@code maxInboundMessageSize}. */
    static Status tooLarge(int max, int length) {
        return Status.RESOURCE_EXHAUSTED.withDescription(String.format(
                "gRPC message exceeds maximum size %d: %d", max, length));
    }

    /** Closes messages that will never be delivered. */
    static void discard(InputStream message) {
        try {
            message.close();
        } catch (IOException e) {
            log.debug("closing an undelivered message", e);
        }
    }
}
