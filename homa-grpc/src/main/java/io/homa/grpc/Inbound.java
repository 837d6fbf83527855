package io.homa.grpc;

import io.grpc.Metadata;
import io.grpc.Status;

import java.io.InputStream;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * The receiving half of one stream: puts the sequenced frames back in order (each arrived as its
 * own Homa RPC, and RPCs overtake each other), hands messages to gRPC only as it asks for them
 * ({@code request(n)}), and reports the end (half-close or close) only after every message before
 * it was taken. It counts the credits granted to the peer and refuses a peer that sends more
 * messages than that, so what it buffers is bounded by what the application asked for.
 *
 * <p>Not thread-safe: the owning stream's lock guards it. The {@link Sink} is called under that
 * lock, so it must only queue work (the streams queue listener calls on their
 * {@link io.grpc.SynchronizationContext}).
 */
final class Inbound {
    /** Where the frames go, in order. */
    interface Sink {
        void headers(Metadata headers);

        void message(InputStream message);

        /**
         * The end, after every message before it was delivered: a half-close (both null) or a
         * close with its status and trailers.
         */
        void end(Status status, Metadata trailers);
    }

    /** A frame the peer may not send: too many messages, a second end, or a sequence number out of range. */
    static final class Violation extends Exception {
        private static final long serialVersionUID = 1L;

        Violation(String message) {
            super(message);
        }
    }

    private final Sink sink;
    /** A frame that came before its turn, with its message (taken from it: the frame is released). */
    private record Early(Frame frame, InputStream message) {
    }

    /** Frames that overtook others, by sequence number; made when the first one does (rare). */
    private Map<Integer, Early> early;
    /** Sized for a unary call's one message (it grows for a stream's). */
    private final ArrayDeque<InputStream> messages = new ArrayDeque<>(2);
    private int nextSeq;
    private long requested;
    private long granted;
    private long messagesArrived;
    private boolean ended;
    private Status endStatus;
    private Metadata endTrailers;
    private boolean endDelivered;

    Inbound(Sink sink, int firstSeq) {
        this.sink = sink;
        this.nextSeq = firstSeq;
    }

    /**
     * Takes a sequenced frame (HEADERS, MESSAGE, HALF_CLOSE or CLOSE); a duplicate is ignored. A
     * message it keeps it takes from the frame (the caller releases the frame either way).
     */
    void accept(Frame f) throws Violation {
        if (f.seq - nextSeq < 0) {
            return;
        }
        if (f.type == Frame.MESSAGE && ++messagesArrived > granted) {
            throw new Violation("the peer sent message " + messagesArrived + " with only " + granted + " credits");
        }
        if (f.seq != nextSeq) {
            // At most the granted messages, one HEADERS and one end frame can be waiting.
            if (early == null) {
                early = new HashMap<>();
            }
            if (early.size() > granted + 2 || early.containsKey(f.seq)) {
                throw new Violation("frame " + f + " is out of range or repeated (expecting seq " + nextSeq + ")");
            }
            early.put(f.seq, new Early(f, f.hasMessage() ? f.takeMessage() : null));
            return;
        }
        take(f, f.type == Frame.MESSAGE ? f.takeMessage() : null);
        Early next;
        while (early != null && (next = early.remove(nextSeq)) != null) {
            take(next.frame(), next.message());
        }
        drain();
    }

    /** Takes what came inside OPEN or a unary RESULT: already in order and not counted against credits. */
    void acceptInOrder(InputStream message) {
        messages.add(message);
        drain();
    }

    /** The end that came inside OPEN or a unary RESULT (see {@link Sink#end}). */
    void acceptEnd(Status status, Metadata trailers) {
        ended = true;
        endStatus = status;
        endTrailers = trailers;
        drain();
    }

    /** The application asks for {@code n} more messages; returns the credit to grant the peer. */
    int request(int n) {
        requested = Math.min(requested + n, Integer.MAX_VALUE);
        drain();
        if (ended) {
            return 0; // the peer sends no more messages
        }
        long grant = Math.min(n, Integer.MAX_VALUE - granted);
        granted += grant;
        return (int) grant;
    }

    /** Messages that arrived and wait for the application to ask (they are closed if the stream ends). */
    void discardWaiting() {
        InputStream m;
        while ((m = messages.poll()) != null) {
            StreamBase.discard(m);
        }
        if (early != null) {
            for (Early e : early.values()) {
                if (e.message() != null) {
                    StreamBase.discard(e.message());
                }
            }
            early.clear();
        }
    }

    /** Credits already granted (for OPEN's initial credit). */
    long granted() {
        return granted;
    }

    private void take(Frame f, InputStream message) {
        nextSeq++;
        switch (f.type) {
            case Frame.HEADERS:
                sink.headers(f.metadata());
                break;
            case Frame.MESSAGE:
                messages.add(message);
                break;
            default:
                ended = true;
                if (f.type == Frame.CLOSE) {
                    endStatus = f.status;
                    endTrailers = f.metadata();
                }
                break;
        }
    }

    private void drain() {
        while (requested > 0 && !messages.isEmpty()) {
            requested--;
            sink.message(messages.poll());
        }
        if (messages.isEmpty() && ended && !endDelivered) {
            endDelivered = true;
            sink.end(endStatus, endTrailers);
        }
    }
}
