package io.homa.grpc;

import io.grpc.Attributes;
import io.grpc.Deadline;
import io.grpc.Decompressor;
import io.grpc.InternalMetadata;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.internal.ServerStream;
import io.grpc.internal.ServerStreamListener;
import io.grpc.internal.StatsTraceContext;
import io.homa.HomaMessageTooLargeException;
import io.homa.HomaRequest;
import io.homa.HomaSocket;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * The server side of one call. A unary call keeps the Homa request of its OPEN and answers it
 * once, at {@link #close}, with headers, message, status and trailers. Other calls send HEADERS,
 * MESSAGE and CLOSE frames as Homa RPCs to the client's socket, each message only against a
 * credit from the client.
 */
final class HomaServerStream extends StreamBase implements ServerStream, Inbound.Sink {
    private final HomaServerTransport transport;
    private final InetSocketAddress client;
    private final String authority;
    private final StatsTraceContext stats;
    private final Attributes attributes;
    private final Deadline deadline;
    private final int maxInboundMessageSize;
    /** The OPEN of a unary call, answered at close; null for other calls. */
    private final HomaRequest unaryRequest;
    private final Inbound inbound = new Inbound(this, 1);
    private final Outbound outbound;
    private ServerStreamListener listener;
    private byte[][] unaryHeaders;
    private final List<ByteBuf> unaryMessages = new ArrayList<>(1);
    /**
     * gRPC has finished creating the call ({@code streamCreated} returned): only then may the
     * listener hear that it closed, since gRPC queues the call's start on the same serializing
     * executor when {@code streamCreated} runs, and a close queued before it finds no call.
     */
    private boolean started;
    /** How the stream ended, for {@link #opened} when it ended before. */
    private Status endStatus;
    /** close() or cancel() was called: nothing more is written. */
    private boolean closeCalled;

    HomaServerStream(HomaServerTransport transport, InetSocketAddress client, Frame open, Deadline deadline,
                     StatsTraceContext stats, Attributes attributes, HomaRequest unaryRequest) {
        super(open.streamId);
        this.transport = transport;
        this.client = client;
        this.authority = open.authority;
        this.deadline = deadline;
        this.stats = stats;
        this.attributes = attributes;
        this.maxInboundMessageSize = transport.maxInboundMessageSize();
        this.unaryRequest = unaryRequest;
        this.outbound = new Outbound(open.streamId, 0, true);
        outbound.credit(open.credit);
    }

    @Override
    HomaSocket socket() {
        return transport.socket();
    }

    @Override
    InetSocketAddress peer() {
        return client;
    }

    @Override
    Deadline deadline() {
        return deadline;
    }

    /** What came inside OPEN: the message and the half-close. Called once the listener is set. */
    void opened(Frame open) {
        synchronized (this) {
            started = true;
            if (closed) { // a CANCEL came while gRPC was creating the call
                Status s = endStatus;
                sync.executeLater(() -> listener.closed(s));
            } else if (open.hasMessage()) {
                if (open.messageLength() > maxInboundMessageSize) {
                    endLocked(tooLarge(maxInboundMessageSize, open.messageLength()), true);
                } else {
                    inbound.acceptInOrder(open.takeMessage());
                }
            }
            if (open.has(Frame.F_HALF_CLOSE) && !closed) {
                inbound.acceptEnd(null, null);
            }
            if (!closed && unaryRequest == null && outbound.isReady()) {
                sync.executeLater(listener::onReady);
            }
        }
        afterLock();
    }

    @Override
    public synchronized void setListener(ServerStreamListener listener) {
        this.listener = listener;
    }

    @Override
    public void request(int numMessages) {
        synchronized (this) {
            if (closed) {
                return;
            }
            int grant = inbound.request(numMessages);
            if (grant > 0 && unaryRequest == null) {
                queueSend(Frame.credit(id, grant));
            }
        }
        afterLock();
    }

    @Override
    public void writeHeaders(Metadata headers, boolean flush) {
        synchronized (this) {
            if (closeCalled) {
                return;
            }
            byte[][] h = InternalMetadata.serialize(headers);
            if (unaryRequest != null) {
                unaryHeaders = h;
            } else {
                outbound.headers(h);
                pump(outbound);
            }
        }
        afterLock();
    }

    @Override
    public void writeMessage(InputStream message) {
        ByteBuf bytes = MessageBuffers.drain(message);
        synchronized (this) {
            if (closeCalled) {
                bytes.release();
                return;
            }
            if (unaryRequest != null) {
                unaryMessages.add(bytes);
            } else {
                outbound.message(bytes);
                pump(outbound);
            }
        }
        afterLock();
    }

    @Override
    public void close(Status status, Metadata trailers) {
        synchronized (this) {
            if (closeCalled) {
                return;
            }
            closeCalled = true;
            stats.streamClosed(status);
            byte[][] t = InternalMetadata.serialize(trailers);
            if (unaryRequest != null) {
                ByteBuf result = Frame.Reply.result(unaryHeaders, unaryMessages, status, t);
                unaryMessages.clear(); // the result has them now (it keeps the buffers, not the list)
                finishLocked(Status.OK);
                answer(result);
            } else {
                outbound.close(status, t);
                pump(outbound); // finished when the client has taken CLOSE (accepted)
            }
        }
        afterLock();
    }

    @Override
    void accepted(int type, Frame.Reply reply) {
        super.accepted(type, reply);
        if (type == Frame.CLOSE) {
            synchronized (this) {
                if (!closed) {
                    finishLocked(Status.OK);
                }
            }
            afterLock();
        }
    }

    @Override
    public void cancel(Status status) {
        end(status, true);
    }

    @Override
    void fail(Status status) {
        end(status, true);
    }

    @Override
    void peerForgot() {
        end(Status.CANCELLED.withDescription("the client " + client + " no longer knows stream " + id), false);
    }

    private void end(Status status, boolean tellClient) {
        synchronized (this) {
            endLocked(status, tellClient);
        }
        afterLock();
    }

    /** The call is abandoned: tells the client (a unary one in its result) and the listener. */
    private void endLocked(Status status, boolean tellClient) {
        if (closed) {
            return;
        }
        if (!closeCalled) {
            closeCalled = true;
            stats.streamClosed(status);
        }
        Status toClient = Status.fromCode(status.getCode()).withDescription(status.getDescription());
        finishLocked(status);
        if (unaryRequest != null) {
            answer(Unpooled.wrappedBuffer(Frame.Reply.status(toClient)));
        } else if (tellClient) {
            queueSend(Frame.cancel(id, toClient));
        }
    }

    /**
     * Answers a unary call's OPEN, after the transport has forgotten the stream (so that the
     * stream's id is known to have ended when the client hears). Lock held.
     */
    private void answer(ByteBuf result) {
        queueAfterLock(() -> {
            if (!unaryRequest.isOpen()) {
                result.release();
                return; // the client gave up on it
            }
            try {
                unaryRequest.reply(result); // takes it over, also when it throws
            } catch (HomaMessageTooLargeException e) {
                unaryRequest.reply(Frame.Reply.status(Status.RESOURCE_EXHAUSTED.withDescription(e.getMessage())));
            }
        });
    }

    /** The stream is over here: the listener learns how, the transport forgets it. Lock held. */
    private void finishLocked(Status status) {
        closed = true;
        endStatus = status;
        closeCalled = true;
        outbound.clear();
        inbound.discardWaiting();
        unaryMessages.forEach(ByteBuf::release);
        unaryMessages.clear();
        queueAfterLock(() -> transport.streamEnded(this));
        ServerStreamListener l = listener;
        if (started) { // else opened() tells the listener
            sync.executeLater(() -> l.closed(status));
        }
    }

    /** A frame from the client; returns the reply code. */
    int onFrame(Frame f) {
        synchronized (this) {
            if (closed) {
                return Frame.Reply.ACK;
            }
            switch (f.type) {
                case Frame.MESSAGE:
                case Frame.HALF_CLOSE:
                    if (f.type == Frame.MESSAGE && f.messageLength() > maxInboundMessageSize) {
                        endLocked(tooLarge(maxInboundMessageSize, f.messageLength()), true);
                        break;
                    }
                    try {
                        inbound.accept(f);
                    } catch (Inbound.Violation v) {
                        endLocked(Status.INTERNAL.withDescription("the client broke the framing: " + v.getMessage()), true);
                    }
                    break;
                case Frame.CREDIT:
                    boolean wasReady = outbound.isReady();
                    outbound.credit(f.credit);
                    pump(outbound);
                    if (!wasReady && outbound.isReady() && !closeCalled) {
                        sync.executeLater(listener::onReady);
                    }
                    break;
                case Frame.CANCEL:
                    finishLocked(Status.CANCELLED.withDescription("the client cancelled the call"
                            + (f.status.getDescription() == null ? "" : ": " + f.status.getDescription())));
                    break;
                default:
                    endLocked(Status.INTERNAL.withDescription("the client sent a " + Frame.typeName(f.type) + " frame"), true);
                    break;
            }
        }
        afterLock();
        return Frame.Reply.ACK;
    }

    // ---- Inbound.Sink: called under the lock ----

    @Override
    public void headers(Metadata headers) {
        // Clients send their headers in OPEN; a HEADERS frame from one is ignored.
    }

    @Override
    public void message(InputStream message) {
        ServerStreamListener l = listener;
        sync.executeLater(() -> l.messagesAvailable(new SingleMessage(message)));
    }

    @Override
    public void end(Status status, Metadata trailers) {
        ServerStreamListener l = listener;
        sync.executeLater(l::halfClosed);
    }

    // ---- the rest of ServerStream ----

    @Override
    public synchronized boolean isReady() {
        return !closeCalled && (unaryRequest != null || outbound.isReady());
    }

    @Override
    public void setDecompressor(Decompressor decompressor) {
    }

    @Override
    public Attributes getAttributes() {
        return attributes;
    }

    @Override
    public String getAuthority() {
        return authority.isEmpty() ? null : authority;
    }

    @Override
    public void triggerEvent(Object event) {
        ServerStreamListener l;
        synchronized (this) {
            l = listener;
        }
        if (l != null) {
            sync.execute(() -> l.triggerEvent(event));
        }
    }

    @Override
    public StatsTraceContext statsTraceContext() {
        return stats;
    }

    @Override
    public int streamId() {
        return (int) id;
    }

    @Override
    public void setOnReadyThreshold(int numBytes) {
    }
}
