package io.homa.grpc;

import io.grpc.Status;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.util.ArrayDeque;
import java.util.List;

/**
 * The sending half of one stream: numbers the sequenced frames in the order gRPC wrote them and
 * lets each message go only with a credit from the receiver (its {@code request(n)}), so a slow
 * reader holds the writer back instead of filling the reader's memory. Frames that need no credit
 * (headers, half-close, close) still wait behind the messages written before them. Nothing leaves
 * before {@link #open()}: a client's frames wait until the server has accepted its OPEN.
 *
 * <p>Not thread-safe: the owning stream's lock guards it.
 */
final class Outbound {
    /** Encodes a frame once its sequence number is known. */
    private interface Encoder {
        ByteBuf encode(long streamId, int seq);
    }

    /** One frame waiting to be numbered and sent; only messages need a credit, and hold their buffer. */
    private record Item(ByteBuf message, Encoder encoder) {
        boolean isMessage() {
            return message != null;
        }
    }

    private final long streamId;
    /** Sized for a unary call's frames (it grows for a stream's). */
    private final ArrayDeque<Item> queue = new ArrayDeque<>(4);
    private int nextSeq;
    private long credit;
    private int queuedMessages;
    private boolean open;

    Outbound(long streamId, int firstSeq, boolean open) {
        this.streamId = streamId;
        this.nextSeq = firstSeq;
        this.open = open;
    }

    /** Queues a message; takes {@code message} over (it becomes the MESSAGE frame's body, or is released). */
    void message(ByteBuf message) {
        queuedMessages++;
        queue.add(new Item(message, (id, seq) -> Frame.message(id, seq, message)));
    }

    void headers(byte[][] headers) {
        queue.add(new Item(null, (id, seq) -> Unpooled.wrappedBuffer(Frame.headers(id, seq, headers))));
    }

    void halfClose() {
        queue.add(new Item(null, (id, seq) -> Unpooled.wrappedBuffer(Frame.halfClose(id, seq))));
    }

    void close(Status status, byte[][] trailers) {
        queue.add(new Item(null, (id, seq) -> Unpooled.wrappedBuffer(Frame.close(id, seq, status, trailers))));
    }

    /** Lets frames leave (the peer accepted the stream). */
    void open() {
        open = true;
    }

    /** The receiver granted {@code n} more messages. */
    void credit(int n) {
        credit = Math.min(credit + n, Long.MAX_VALUE / 2);
    }

    /** gRPC's {@code isReady()}: a message written now could leave at once. */
    boolean isReady() {
        return open && credit > queuedMessages;
    }

    /** Numbers and encodes, in order, every frame that may leave now, into {@code out} (which owns them). */
    void pump(List<ByteBuf> out) {
        while (open && !queue.isEmpty()) {
            Item head = queue.peek();
            if (head.isMessage()) {
                if (credit == 0) {
                    return;
                }
                credit--;
                queuedMessages--;
            }
            queue.poll();
            out.add(head.encoder().encode(streamId, nextSeq++));
        }
    }

    /** Drops whatever waits (the stream ended), releasing the messages. */
    void clear() {
        Item item;
        while ((item = queue.poll()) != null) {
            if (item.isMessage()) {
                item.message().release();
            }
        }
        queuedMessages = 0;
    }
}
