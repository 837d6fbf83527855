package io.homa.collective.internal;

import io.homa.CallOptions;
import io.homa.HomaRequest;
import io.homa.HomaSocket;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Segments as Homa RPCs: each is one request (its ByteBuf sent without a copy), answered with an
 * empty response once the receiving rank took it, or with the reason it refused it. Homa delivers a
 * message whole or not at all, so a segment needs no framing of its own.
 */
public final class HomaLink implements Link {
    private static final byte[] OK = new byte[0];
    private final HomaSocket socket;
    private final InetSocketAddress[] members;
    private final int rank;
    private volatile boolean closed;

    public HomaLink(HomaSocket socket, List<InetSocketAddress> members, int rank) {
        this.socket = socket;
        this.members = members.toArray(new InetSocketAddress[0]);
        this.rank = rank;
    }

    @Override
    public void start(Inbound inbound) {
        socket.serve(request -> inbound.deliver(request.payload(), new HomaReply(request)));
    }

    @Override
    public void send(int peer, ByteBuf message, long timeoutNanos, SendCallback callback) {
        if (closed) {
            message.release();
            callback.done(new IllegalStateException("the group is closed"), null);
            return;
        }
        CompletableFuture<ByteBuf> call;
        try {
            // Idempotent: a rank drops a segment it holds already (and answers OK for an operation it
            // finished), so a segment sent again is harmless; and a rank whose socket opened after its
            // peers' first segments left looks to them like a restarted server, whose calls a
            // non-idempotent caller fails (HomaOutcomeUnknownException) rather than sends again.
            call = socket.call(members[peer], message, CallOptions.DEFAULT
                    .withDeadline(Duration.ofNanos(timeoutNanos)).withIdempotent(true)); // releases message if it throws
        } catch (RuntimeException e) {
            callback.done(e, null);
            return;
        }
        call.whenComplete((response, failure) -> {
            if (failure != null) {
                callback.done(failure, null);
                return;
            }
            try {
                callback.done(null, response.isReadable() ? response.toString(StandardCharsets.UTF_8) : null);
            } finally {
                response.release();
            }
        });
    }

    @Override
    public Timer schedule(long delayNanos, Runnable task) {
        return Timers.schedule(delayNanos, task);
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public ByteBufAllocator alloc() {
        return PooledByteBufAllocator.DEFAULT;
    }

    @Override
    public void close() {
        closed = true;
    }

    @Override
    public String toString() {
        return "Homa " + members[rank];
    }

    private record HomaReply(HomaRequest request) implements Reply {
        @Override
        public void ok() {
            request.reply(OK);
        }

        @Override
        public void refuse(String reason) {
            request.reply(reason.getBytes(StandardCharsets.UTF_8));
        }
    }
}
