package io.homa.grpc;

import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.Deadline;
import io.grpc.DecompressorRegistry;
import io.grpc.InternalMetadata;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.internal.ClientStream;
import io.grpc.internal.ClientStreamListener;
import io.grpc.internal.ClientStreamListener.RpcProgress;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.InsightBuilder;
import io.grpc.internal.StatsTraceContext;
import io.homa.HomaSocket;
import io.netty.buffer.ByteBuf;

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The client side of one call. Calls that send one message (unary, server streaming) wait for
 * the half-close and send OPEN with the message in it; a unary call then gets its whole answer in
 * OPEN's Homa response. Other calls send OPEN at {@link #start}, and their messages, half-close
 * and credits after the server accepted it. The server's HEADERS, MESSAGE and CLOSE frames reach
 * {@link #onFrame} through the channel's {@link ClientEndpoint}.
 */
final class HomaClientStream extends StreamBase implements ClientStream, Inbound.Sink {
    private final HomaClientTransport transport;
    private final MethodDescriptor<?, ?> method;
    private final Metadata headers;
    private final CallOptions callOptions;
    private final StatsTraceContext stats;
    /** Unary and server-streaming calls: the one message rides in OPEN. */
    private final boolean oneRequest;
    private final Inbound inbound = new Inbound(this, 0);
    private final Outbound outbound;
    private String authority;
    private Deadline deadline;
    private int maxInboundMessageSize;
    private int maxOutboundMessageSize = Integer.MAX_VALUE;
    private ClientStreamListener listener;
    /** Messages written before OPEN went (one-request calls). */
    private final List<ByteBuf> beforeOpen = new ArrayList<>(1);
    private boolean openSent;
    private boolean openAccepted;
    private boolean unary;
    private boolean halfClosed;
    /** Credits granted after OPEN went and before the server accepted it. */
    private int creditToSend;
    /** Why the stream ended before {@link #start}, if it did. */
    private Status closedBeforeStart;

    HomaClientStream(HomaClientTransport transport, long id, MethodDescriptor<?, ?> method, Metadata headers,
                     CallOptions callOptions, StatsTraceContext stats) {
        super(id);
        this.transport = transport;
        this.method = method;
        this.headers = headers;
        this.callOptions = callOptions;
        this.stats = stats;
        this.authority = transport.authority();
        this.maxInboundMessageSize = transport.maxInboundMessageSize();
        this.oneRequest = method.getType().clientSendsOneMessage();
        this.outbound = new Outbound(id, 1, false);
    }

    @Override
    HomaSocket socket() {
        return transport.endpoint().socket();
    }

    @Override
    InetSocketAddress peer() {
        return transport.server();
    }

    @Override
    synchronized Deadline deadline() {
        return deadline;
    }

    /** gRPC's idempotent (and safe) methods may run twice: their OPEN is sent again after a server restart. */
    @Override
    boolean idempotentOpen() {
        return method.isIdempotent() || method.isSafe();
    }

    boolean countsForInUse() {
        return GrpcUtil.shouldBeCountedForInUse(callOptions);
    }

    @Override
    public void start(ClientStreamListener listener) {
        synchronized (this) {
            this.listener = listener;
            stats.clientOutboundHeaders();
            if (closedBeforeStart != null) {
                Status s = closedBeforeStart;
                sync.executeLater(() -> listener.closed(s, RpcProgress.PROCESSED, new Metadata()));
            } else if (!transport.register(this)) {
                closed = true;
                Status s = transport.shutdownStatus();
                stats.streamClosed(s);
                sync.executeLater(() -> listener.closed(s, RpcProgress.REFUSED, new Metadata()));
            } else if (!oneRequest) {
                sendOpen(0, null);
            }
        }
        try {
            afterLock();
        } finally {
            transport.reportToListener(); // "in use", if this stream made it so
        }
    }

    /** Queues OPEN with the credits granted so far; takes {@code message} (null if none) over. Lock held. */
    private void sendOpen(int flags, ByteBuf message) {
        openSent = true;
        unary = (flags & Frame.F_UNARY) != 0;
        long timeout = deadline == null ? Frame.NO_TIMEOUT : Math.max(0, deadline.timeRemaining(TimeUnit.NANOSECONDS));
        queueSend(Frame.open(id, flags, method.getFullMethodName(), authority, timeout,
                (int) Math.min(Integer.MAX_VALUE, inbound.granted()), InternalMetadata.serialize(headers), message));
    }

    @Override
    public void request(int numMessages) {
        synchronized (this) {
            if (closed) {
                return;
            }
            int grant = inbound.request(numMessages);
            if (grant > 0 && openSent && !unary) {
                if (openAccepted) {
                    queueSend(Frame.credit(id, grant));
                } else {
                    creditToSend += grant;
                }
            }
        }
        afterLock();
    }

    @Override
    public void writeMessage(InputStream message) {
        ByteBuf bytes = MessageBuffers.drain(message);
        synchronized (this) {
            if (closed) {
                bytes.release();
                return;
            }
            if (bytes.readableBytes() > maxOutboundMessageSize) {
                int length = bytes.readableBytes();
                bytes.release();
                failLocked(Status.RESOURCE_EXHAUSTED.withDescription(String.format(
                        "message of %d bytes is larger than the maximum of %d", length, maxOutboundMessageSize)));
            } else if (!openSent) {
                beforeOpen.add(bytes);
            } else {
                outbound.message(bytes);
                pump(outbound);
            }
        }
        afterLock();
    }

    @Override
    public void halfClose() {
        synchronized (this) {
            if (closed || halfClosed) {
                return;
            }
            halfClosed = true;
            if (openSent) {
                outbound.halfClose();
                pump(outbound);
            } else if (beforeOpen.size() <= 1) {
                ByteBuf message = beforeOpen.isEmpty() ? null : beforeOpen.get(0);
                boolean isUnary = method.getType() == MethodDescriptor.MethodType.UNARY && message != null;
                sendOpen(Frame.F_HALF_CLOSE | (isUnary ? Frame.F_UNARY : 0), message);
            } else { // more than one message on a one-request method: send them as a stream
                sendOpen(0, null);
                beforeOpen.forEach(outbound::message);
                outbound.halfClose();
            }
            beforeOpen.clear();
        }
        afterLock();
    }

    @Override
    public void cancel(Status reason) {
        end(reason, true, RpcProgress.PROCESSED);
    }

    @Override
    void fail(Status status) {
        end(status, true, RpcProgress.PROCESSED);
    }

    /**
     * An OPEN the Homa server refused before its application saw it (OVERLOADED: its handler queue
     * shed it, or was full) is a refused stream, which gRPC may retry transparently. A frame the
     * server refused when the call's deadline was all but over (it also refuses a frame whose
     * deadline passed while it waited, taking the deadline a little early) is DEADLINE_EXCEEDED,
     * as the call's own timer would say a moment later; for an OPEN a transparent retry would only
     * be refused again. "All but over" follows the server's usual margin (2% of the time the frame
     * carried, 1-100 ms) plus 5 ms; a server whose loop runs late takes a wider one, and its
     * refusal of an OPEN is then a refused stream, whose transparent retry meets the same rule
     * with far less time left. Any other failure is a processed one (after a server restart the
     * outcome is unknown: no transparent retry).
     */
    @Override
    void failedSend(int type, Throwable error, long sentTimeoutNanos) {
        Throwable cause = Failures.unwrap(error);
        if (cause instanceof io.homa.HomaOverloadedException) {
            if (Failures.refusedAtItsDeadline(deadline(), sentTimeoutNanos)) {
                // A refused OPEN's stream is unknown to the server: nothing to tell it.
                end(Status.DEADLINE_EXCEEDED.withDescription("deadline exceeded while the call waited in the Homa"
                        + " server's queue (refused unrun): " + cause.getMessage()).withCause(cause),
                        type != Frame.OPEN, RpcProgress.PROCESSED);
                return;
            }
            if (type == Frame.OPEN) {
                end(Failures.toStatus(cause, deadline()), false, RpcProgress.REFUSED);
                return;
            }
        }
        fail(Failures.toStatus(error, deadline()));
    }

    /** Ends the stream at this end; tells the server if it knows the stream. */
    private void end(Status status, boolean tellServer, RpcProgress progress) {
        CompletableFuture<ByteBuf> call;
        synchronized (this) {
            if (closed) {
                return;
            }
            finishLocked(status, new Metadata(), tellServer, progress);
            call = unary ? openCall : null;
        }
        if (call != null) {
            call.cancel(false); // aborts the Homa RPC of a unary call
        }
        afterLock();
    }

    private void failLocked(Status status) {
        finishLocked(status, new Metadata(), true, RpcProgress.PROCESSED);
    }

    /** The stream is over: tells the listener (once), forgets the stream. Lock held. */
    private void finishLocked(Status status, Metadata trailers, boolean tellServer, RpcProgress progress) {
        closed = true;
        outbound.clear();
        inbound.discardWaiting();
        beforeOpen.forEach(ByteBuf::release);
        beforeOpen.clear();
        if (tellServer && openSent) {
            queueSend(Frame.cancel(id, status));
        }
        if (listener == null) {
            closedBeforeStart = status;
            return;
        }
        queueAfterLock(() -> transport.unregister(this));
        stats.clientInboundTrailers(trailers);
        stats.streamClosed(status);
        ClientStreamListener l = listener;
        sync.executeLater(() -> l.closed(status, progress, trailers));
    }

    /** A frame from the server; returns the reply code. */
    int onFrame(Frame f) {
        synchronized (this) {
            if (closed) {
                return Frame.Reply.ACK; // a late frame of a stream that ended here
            }
            switch (f.type) {
                case Frame.HEADERS:
                case Frame.MESSAGE:
                case Frame.CLOSE:
                    if (f.type == Frame.MESSAGE && f.messageLength() > maxInboundMessageSize) {
                        failLocked(tooLarge(maxInboundMessageSize, f.messageLength()));
                        break;
                    }
                    try {
                        inbound.accept(f);
                    } catch (Inbound.Violation v) {
                        failLocked(Status.INTERNAL.withDescription("the server broke the framing: " + v.getMessage()));
                    }
                    break;
                case Frame.CREDIT:
                    credit(f.credit);
                    break;
                case Frame.CANCEL:
                    finishLocked(f.status, new Metadata(), false, RpcProgress.PROCESSED);
                    break;
                default:
                    failLocked(Status.INTERNAL.withDescription("the server sent a " + Frame.typeName(f.type) + " frame"));
                    break;
            }
        }
        afterLock();
        return Frame.Reply.ACK;
    }

    /** Lock held. */
    private void credit(int n) {
        boolean wasReady = outbound.isReady();
        outbound.credit(n);
        pump(outbound);
        notifyIfReady(wasReady);
    }

    private void notifyIfReady(boolean wasReady) {
        if (!wasReady && outbound.isReady() && listener != null) {
            ClientStreamListener l = listener;
            sync.executeLater(l::onReady);
        }
    }

    @Override
    void accepted(int type, Frame.Reply reply) {
        if (type != Frame.OPEN) {
            super.accepted(type, reply);
            return;
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            if (reply.code == Frame.Reply.RESULT) {
                result(reply);
            } else {
                openAccepted = true;
                if (creditToSend > 0) {
                    queueSend(Frame.credit(id, creditToSend));
                    creditToSend = 0;
                }
                boolean wasReady = outbound.isReady();
                outbound.open();
                pump(outbound);
                notifyIfReady(wasReady);
            }
        }
        afterLock();
    }

    /** A unary call's answer; takes its messages (the caller releases the reply). Lock held. */
    private void result(Frame.Reply reply) {
        if (reply.headers != null) {
            headers(reply.headers);
        }
        for (ByteBuf m : reply.messages) {
            if (m.readableBytes() > maxInboundMessageSize) {
                failLocked(tooLarge(maxInboundMessageSize, m.readableBytes()));
                return;
            }
        }
        for (ByteBuf m : reply.messages) {
            inbound.acceptInOrder(MessageBuffers.stream(m));
        }
        reply.messages.clear();
        inbound.acceptEnd(reply.status, reply.trailers);
    }

    // ---- Inbound.Sink: called under the lock ----

    @Override
    public void headers(Metadata h) {
        stats.clientInboundHeaders(h);
        ClientStreamListener l = listener;
        sync.executeLater(() -> l.headersRead(h));
    }

    @Override
    public void message(InputStream message) {
        ClientStreamListener l = listener;
        sync.executeLater(() -> l.messagesAvailable(new SingleMessage(message)));
    }

    @Override
    public void end(Status status, Metadata trailers) {
        finishLocked(status, trailers, false, RpcProgress.PROCESSED);
    }

    // ---- the rest of ClientStream ----

    @Override
    public synchronized boolean isReady() {
        return !closed && (openSent ? outbound.isReady() : oneRequest);
    }

    @Override
    public void setFullStreamDecompression(boolean fullStreamDecompression) {
    }

    @Override
    public void setDecompressorRegistry(DecompressorRegistry decompressorRegistry) {
    }

    @Override
    public synchronized void setAuthority(String authority) {
        this.authority = authority;
    }

    @Override
    public synchronized void setMaxInboundMessageSize(int maxSize) {
        this.maxInboundMessageSize = maxSize;
    }

    @Override
    public synchronized void setMaxOutboundMessageSize(int maxSize) {
        this.maxOutboundMessageSize = maxSize;
    }

    @Override
    public synchronized void setDeadline(Deadline deadline) {
        this.deadline = deadline;
    }

    @Override
    public Attributes getAttributes() {
        return transport.getAttributes();
    }

    @Override
    public void appendTimeoutInsight(InsightBuilder insight) {
        insight.appendKeyValue("remote_addr", transport.server());
    }
}
