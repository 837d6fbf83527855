package io.homa.internal.rpc;

import io.homa.core.ReceivedMessage;
import io.homa.internal.Failure;
import io.homa.internal.udp.NettyPayloadMemory;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.util.IllegalReferenceCountException;
import io.netty.util.ReferenceCountUtil;

import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * A request on its way to the user's handler, received over Homa or over TCP (its {@link Path}):
 * the API's request object ({@code io.homa.ServerRequest}) is this class with the API's interface
 * added, so a request costs one object. Its state moves once from OPEN to REPLIED (the user
 * answered) or to DROPPED (the handler threw, the request timed out, or the socket closed); the
 * compare-and-set makes {@link #reply} safe from any thread and at most once.
 *
 * <p>The request's bytes are {@link #body}, one reference held by this object from its creation
 * until the move out of OPEN (whoever makes that move releases it); {@link #payload()} hands out
 * references of its own. Reads take a reference first, so a read after the release throws rather
 * than reading memory that went back to the pool.
 *
 * <p>Internal use only. The fields that are not final belong to the thread that received the
 * request (its event loop).
 */
public abstract class InboundRequest implements DeadlineQueue.Entry, UserPayload {
    private static final int OPEN = 0;
    private static final int REPLIED = 1;
    private static final int DROPPED = 2;

    /** Where a request's answer goes: the engine loop that received it, or its TCP connection. */
    public interface Path {
        /**
         * Sends the reply (any thread): {@code bytes}, or if that is null {@code owner}'s readable
         * bytes (one reference, released when no longer read).
         */
        void reply(InboundRequest r, byte[] bytes, ByteBuf owner);

        /** Drops the request (any thread): its caller fails; a no-op if it was answered or dropped. */
        void dropRequest(InboundRequest r, String why);

        /**
         * Refuses a request unrun whose deadline passed while it waited for a handler (any thread):
         * its caller, if it still waits, is told it did not run (OVERLOADED), and a copy sent
         * again is not run. Counted as expired; a no-op if it was answered or dropped.
         */
        void expireRequest(InboundRequest r);

        /**
         * Refuses a request unrun that waited {@code waitedNanos} for a handler and that the queue
         * will not serve (longer than its target under overload, or behind work that would outlast
         * its deadline; any thread): its caller hears OVERLOADED at once.
         */
        void shedRequest(InboundRequest r, long waitedNanos);

        /** Counts a request whose handler never ran because it was answered, dropped or cancelled while it waited (any thread). */
        void skippedRequest(InboundRequest r);

        /** Whether replies can no longer go out (socket or connection closed). */
        boolean isClosed();

        /** The verified client's TLS session when the request came over a TLS connection (the TCP fallback of a mutual-TLS socket), else null. */
        default javax.net.ssl.SSLSession tlsSession() {
            return null;
        }

        /**
         * The TLS session that verified {@code peer}: the connection's ({@link #tlsSession()}), or
         * over Homa that of the key exchange with the peer (mutual TLS); else null.
         */
        default javax.net.ssl.SSLSession tlsSessionOf(InetSocketAddress peer) {
            return tlsSession();
        }

        /** The longest reply this path takes (the socket's {@code maxMessageLength}). */
        int maxReplyLength();
    }

    /** Makes the request object the handler sees (the API's subclass). */
    @FunctionalInterface
    public interface Factory {
        /** Takes over {@code message}'s memory. */
        InboundRequest create(Path path, long rpcId, InetSocketAddress peer, ReceivedMessage message);
    }
    // The fields are packed (a request is one object per call on a busy server): its flags and
    // the queue's verdict share one int, the two forms of its reply one reference, what the path
    // knows (the length limit, the TLS session) is asked of the path, the loop finds its open
    // requests at close in its table by RPC id (not through a list of its own, nor a flag), and
    // the TCP server keeps its timers in a table of its own. 80 bytes.
    private final Path path;
    /** The RPC's client id, as in the engine's REQUEST event. */
    public final long rpcId;
    private final InetSocketAddress peer;
    private final ByteBuf body;
    /** Where the bytes start in {@link #body}: read at absolute indices, as a caller may move its own. */
    private final int bodyIndex;
    private final int length;
    /**
     * Four flags, each changed by compare-and-set: the state ({@link #STATE}: OPEN, REPLIED or
     * DROPPED), the phase ({@link #PHASE}: 0 while it waits, {@link #PHASE_STARTED} once its
     * handler started, {@link #PHASE_EXPIRED} if its deadline passed first), {@link #LENT} once
     * {@link #payload()} lent {@link #body} itself, and the {@link RequestQueue}'s verdict
     * ({@link #VERDICT}) once taken from the queue. A field and an updater, not an object.
     */
    private volatile int bits;
    private static final AtomicIntegerFieldUpdater<InboundRequest> BITS =
            AtomicIntegerFieldUpdater.newUpdater(InboundRequest.class, "bits");
    private static final int STATE = 0b11;
    private static final int PHASE = 0b1100;
    private static final int PHASE_STARTED = 0b0100;
    private static final int PHASE_EXPIRED = 0b1000;
    private static final int LENT = 0b10000;
    private static final int VERDICT_SHIFT = 5;
    private static final int VERDICT = 0b11 << VERDICT_SHIFT;
    /**
     * When its caller stops waiting ({@link System#nanoTime()}): the deadline the client sent, or
     * else the server's request timeout. No handler starts for it later; over Homa it is also
     * when its loop's {@link DeadlineQueue} drops it. Set before it is queued.
     */
    public long deadline;
    /** In the {@link RequestQueue}: when it was queued, its handler, and what to do with it once taken. */
    long queuedAt;
    RequestHandler handler;
    /**
     * The next of the loop's open requests with the same RPC id (from other clients): the chains
     * of its table of open requests, which finds the one a CANCEL names and, at close, all of
     * them. Null while not in the table; loop only.
     */
    public InboundRequest sameId;
    /** The reply while the engine reads it ({@link #replyWith}): a {@code byte[]} or a {@code ByteBuf}; the loop's. */
    private Object reply;
    private int deadlineSlot = -1;

    /** Takes over {@code message}'s memory. */
    protected InboundRequest(Path path, long rpcId, InetSocketAddress peer, ReceivedMessage message) {
        this.path = path;
        this.rpcId = rpcId;
        this.peer = peer;
        this.length = message.length();
        this.body = NettyPayloadMemory.toByteBuf(message);
        this.bodyIndex = body.readerIndex();
    }

    /** Sets the {@code mask} bits of {@link #bits} to {@code value} if they are {@code expect}: false if they were not. */
    private boolean change(int mask, int expect, int value) {
        for (;;) {
            int v = bits;
            if ((v & mask) != expect) {
                return false;
            }
            if (BITS.compareAndSet(this, v, (v & ~mask) | value)) {
                return true;
            }
        }
    }

    private int state() {
        return bits & STATE;
    }

    /** What to do with it once taken from the {@link RequestQueue}: its RUN, EXPIRED, SHED or GONE. */
    int queueVerdict() {
        return (bits & VERDICT) >>> VERDICT_SHIFT;
    }

    /** Sets {@link #queueVerdict()} (under the queue's lock, as it is taken). */
    void queueVerdict(int verdict) {
        for (;;) {
            int v = bits;
            if (BITS.compareAndSet(this, v, (v & ~VERDICT) | (verdict << VERDICT_SHIFT))) {
                return;
            }
        }
    }

    /** The path's TLS session for the peer (see {@link Path#tlsSessionOf}). */
    protected javax.net.ssl.SSLSession pathTlsSession() {
        return path.tlsSessionOf(peer);
    }

    /** The client's address (where the response goes). */
    public InetSocketAddress peer() {
        return peer;
    }

    /** The request's length in bytes. */
    public int length() {
        return length;
    }

    /** A fresh copy of the request's bytes; throws IllegalStateException once answered or dropped. */
    public byte[] toByteArray() {
        retainBody();
        try {
            return ByteBufUtil.getBytes(body, bodyIndex, length);
        } finally {
            body.release();
        }
    }

    /**
     * A view of the bytes holding a reference of its own, another object on each call; throws
     * IllegalStateException once answered or dropped. The first call lends {@link #body} itself
     * (no object made: the common handler takes it once, to read or echo it), which is why this
     * object reads the body only at absolute indices; later calls get slices.
     */
    public ByteBuf payload() {
        retainBody();
        try {
            // Either way it shares the reference just taken: the caller releases it.
            return change(LENT, 0, LENT) ? body : body.slice(bodyIndex, length);
        } catch (RuntimeException e) {
            body.release();
            throw e;
        }
    }

    /** Takes a reference to the bytes while OPEN (also when a reply races with this call). */
    private void retainBody() {
        try {
            if (state() == OPEN) {
                body.retain();
                return;
            }
        } catch (IllegalReferenceCountException e) {
            // answered or dropped meanwhile
        }
        throw new IllegalStateException(this + " was answered or dropped: its bytes were released"
                + " (take payload() before replying to keep them)");
    }

    /** Sends the response (see the API's {@code HomaRequest#reply(byte[])}). */
    public void reply(byte[] response) {
        if (response == null) {
            throw failure(Failure.BAD_ARGUMENT, "response must not be null (use new byte[0] for an empty one)");
        }
        checkLength(response.length);
        if (claim()) {
            path.reply(this, response, null);
        }
    }

    /** Sends the response without copying; takes over one reference in every case. */
    public void reply(ByteBuf response) {
        if (response == null) {
            throw failure(Failure.BAD_ARGUMENT, "response must not be null (use Unpooled.EMPTY_BUFFER for an empty one)");
        }
        boolean sent = false;
        try {
            checkLength(response.readableBytes());
            if (claim()) {
                sent = true;
                path.reply(this, null, response);
            }
        } finally {
            if (!sent) {
                ReferenceCountUtil.safeRelease(response);
            }
        }
    }

    private void checkLength(int length) {
        int max = path.maxReplyLength();
        if (length > max) {
            throw failure(Failure.MESSAGE_TOO_LARGE, "response of " + length + " bytes to " + peer
                    + " exceeds maxMessageLength " + max);
        }
    }

    // The reply as the engine reads it (UserPayload): no view object per reply.

    /**
     * The reply the engine is to read from this object, set on the loop that hands it to the
     * engine: {@code bytes} or {@code buffer}, exactly one of them non-null (the buffer's
     * reference this takes over).
     */
    public void replyWith(byte[] bytes, ByteBuf buffer) {
        assert bytes == null || buffer == null : "a reply is bytes or a buffer, not both";
        this.reply = bytes != null ? bytes : buffer;
    }

    @Override
    public byte[] payloadBytes() {
        return reply instanceof byte[] b ? b : null;
    }

    @Override
    public ByteBuf payloadBuffer() {
        return reply instanceof ByteBuf b ? b : null;
    }

    @Override
    public void releasePayload() {
        Object r = reply;
        reply = null;
        if (r instanceof ByteBuf b) {
            b.release();
        }
    }

    /** The API's exception for a bad argument to {@link #reply}. */
    protected abstract RuntimeException failure(Failure kind, String message);

    /** OPEN to REPLIED; false (reply discarded) if dropped; throws if replied before. */
    private boolean claim() {
        if (change(STATE, OPEN, REPLIED)) {
            body.release();
            return true;
        }
        if (state() == REPLIED) {
            throw new IllegalStateException("this request from " + peer + " was answered already");
        }
        return false;
    }

    /** Drops the request through its path (handler failed, or it waited past its timeout). */
    public void drop(String why) {
        path.dropRequest(this, why);
    }

    @Override
    public long deadlineNanos() {
        return deadline;
    }

    @Override
    public int deadlineSlot() {
        return deadlineSlot;
    }

    @Override
    public void deadlineSlot(int slot) {
        deadlineSlot = slot;
    }

    /** Its deadline passed while it waited (see {@link Path#expireRequest}). */
    void expired() {
        path.expireRequest(this);
    }

    /** Taken from the queue after it was dropped or cancelled (see {@link Path#skippedRequest}). */
    void skipped() {
        path.skippedRequest(this);
    }

    /** Refused by the queue after waiting {@code waitedNanos} (see {@link Path#shedRequest}). */
    void shed(long waitedNanos) {
        path.shedRequest(this, waitedNanos);
    }

    /** The time left until {@link #deadline} ({@link System#nanoTime()} based), 0 once it passed. */
    public long remainingNanos() {
        return Math.max(0, deadline - System.nanoTime());
    }

    /**
     * Its handler may start: false if its deadline passed first (the timer won), and then the
     * handler must not run. Once only.
     */
    boolean markStarted() {
        return change(PHASE, 0, PHASE_STARTED);
    }

    /**
     * Its deadline passed (over Homa or TCP). Still waiting for a thread: refused unrun as expired
     * (the handler will not start); in its handler: dropped, a later reply is discarded.
     */
    @Override
    public void deadlinePassed() {
        if (change(PHASE, 0, PHASE_EXPIRED)) {
            expired();
        } else {
            drop("no reply within its deadline or the request timeout");
        }
    }

    /** OPEN to DROPPED: true if this call dropped it (and released its bytes). */
    public boolean markDropped() {
        if (change(STATE, OPEN, DROPPED)) {
            body.release();
            return true;
        }
        return false;
    }

    /** Whether a reply can still be sent. */
    public boolean isOpen() {
        return state() == OPEN && !path.isClosed();
    }

    @Override
    public String toString() {
        return "request " + Long.toUnsignedString(rpcId, 16) + " from " + peer + " (" + length() + " B)";
    }
}
