package io.homa.grpc;

import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.Attributes;
import io.grpc.Deadline;
import io.grpc.Grpc;
import io.grpc.InternalChannelz.SocketStats;
import io.grpc.InternalLogId;
import io.grpc.Metadata;
import io.grpc.SecurityLevel;
import io.grpc.Status;
import io.grpc.internal.GrpcAttributes;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.ServerTransport;
import io.grpc.internal.ServerTransportListener;
import io.grpc.internal.StatsTraceContext;
import io.homa.HomaRequest;
import io.homa.HomaSocket;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The one gRPC server transport of a {@link HomaServer}: every client's calls arrive on the
 * server's single Homa socket, so there is one transport for all of them (the client's address is
 * in each call's attributes). It serves the socket: PING, OPEN (which makes a stream and tells
 * gRPC), and the frames of open streams, found by (client address, stream id).
 */
final class HomaServerTransport implements ServerTransport {
    /** Streams remembered after they end, so that their late frames are acknowledged, not refused. */
    private static final int ENDED_STREAMS_REMEMBERED = 10_000;

    private record Key(InetSocketAddress client, long streamId) {
    }

    private final HomaServer server;
    private final InternalLogId logId;
    private final ConcurrentHashMap<Key, HomaServerStream> streams = new ConcurrentHashMap<>();
    private final Map<Key, Boolean> ended = Collections.synchronizedMap(new LinkedHashMap<>() {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<Key, Boolean> eldest) {
            return size() > ENDED_STREAMS_REMEMBERED;
        }
    });
    private ServerTransportListener listener;
    private Attributes attributes;
    private boolean shutdown;
    private boolean terminated;

    HomaServerTransport(HomaServer server) {
        this.server = server;
        this.logId = InternalLogId.allocate(getClass(), server.socket().localAddress().toString());
    }

    void start(ServerTransportListener listener) {
        Attributes ready = listener.transportReady(Attributes.newBuilder()
                .set(Grpc.TRANSPORT_ATTR_LOCAL_ADDR, server.socket().localAddress())
                .set(GrpcAttributes.ATTR_SECURITY_LEVEL, server.socket().config().security() != null
                        ? SecurityLevel.PRIVACY_AND_INTEGRITY : SecurityLevel.NONE)
                .build());
        synchronized (this) {
            this.listener = listener;
            this.attributes = ready;
        }
    }

    HomaSocket socket() {
        return server.socket();
    }

    int maxInboundMessageSize() {
        return server.maxInboundMessageSize();
    }

    /** Runs on the socket's executor for each frame a client sent. */
    void handle(HomaRequest request) {
        Frame f = Frame.read(request);
        if (f == null) {
            return;
        }
        try {
            dispatch(request, f);
        } finally {
            f.release(); // a message nobody took
        }
    }

    private void dispatch(HomaRequest request, Frame f) {
        switch (f.type) {
            case Frame.PING:
                request.reply(Frame.Reply.of(isShutdown() ? Frame.Reply.REFUSED : Frame.Reply.ACK));
                break;
            case Frame.OPEN:
                open(request, f);
                break;
            default:
                Key key = new Key(request.peer(), f.streamId);
                HomaServerStream stream = streams.get(key);
                int code;
                if (stream != null) {
                    code = stream.onFrame(f);
                } else if (f.type == Frame.CANCEL) {
                    // It overtook its OPEN (each is its own Homa RPC): the OPEN, when it comes, is refused.
                    ended.put(key, Boolean.TRUE);
                    code = Frame.Reply.ACK;
                } else {
                    code = ended.containsKey(key) ? Frame.Reply.ACK : Frame.Reply.UNKNOWN_STREAM;
                }
                request.reply(Frame.Reply.of(code));
                break;
        }
    }

    private void open(HomaRequest request, Frame f) {
        Key key = new Key(request.peer(), f.streamId);
        boolean unary = f.has(Frame.F_UNARY);
        Metadata headers = f.metadata();
        headers.discardAll(GrpcUtil.TIMEOUT_KEY);
        Deadline deadline = null;
        if (f.timeoutNanos != Frame.NO_TIMEOUT) {
            headers.put(GrpcUtil.TIMEOUT_KEY, f.timeoutNanos);
            deadline = Deadline.after(f.timeoutNanos, TimeUnit.NANOSECONDS);
        }
        HomaServerStream stream;
        ServerTransportListener l;
        synchronized (this) {
            if (shutdown) {
                request.reply(unary
                        ? Frame.Reply.status(Status.UNAVAILABLE.withDescription("the server is shutting down"))
                        : Frame.Reply.of(Frame.Reply.REFUSED));
                return;
            }
            if (streams.containsKey(key)) {
                request.reply(Frame.Reply.badFrame("stream " + f.streamId + " is open already"));
                return;
            }
            if (ended.containsKey(key)) { // cancelled before its OPEN arrived, or a stale repeat
                request.reply(unary
                        ? Frame.Reply.status(Status.CANCELLED.withDescription("cancelled before it arrived"))
                        : Frame.Reply.of(Frame.Reply.UNKNOWN_STREAM));
                return;
            }
            StatsTraceContext stats = StatsTraceContext.newServerContext(server.tracerFactories(), f.method, headers);
            Attributes.Builder ab = attributes.toBuilder().set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, request.peer());
            javax.net.ssl.SSLSession tls = request.tlsSession();
            if (tls != null) {
                ab.set(Grpc.TRANSPORT_ATTR_SSL_SESSION, tls);
            }
            Attributes streamAttributes = ab.build();
            stream = new HomaServerStream(this, request.peer(), f, deadline, stats, streamAttributes, unary ? request : null);
            streams.put(key, stream);
            l = listener;
        }
        l.streamCreated(stream, f.method, headers);
        if (!unary) {
            request.reply(Frame.Reply.of(Frame.Reply.ACK));
        }
        stream.opened(f);
    }

    /** A stream ended: forget it (remembering that it was). */
    void streamEnded(HomaServerStream stream) {
        Key key = new Key(stream.peer(), stream.id);
        ended.put(key, Boolean.TRUE);
        streams.remove(key, stream);
        maybeTerminate();
    }

    private synchronized boolean isShutdown() {
        return shutdown;
    }

    @Override
    public void shutdown() {
        synchronized (this) {
            shutdown = true;
        }
        maybeTerminate();
    }

    @Override
    public void shutdownNow(Status reason) {
        shutdown();
        for (HomaServerStream s : new ArrayList<>(streams.values())) {
            s.cancel(reason);
        }
    }

    private void maybeTerminate() {
        ServerTransportListener l;
        synchronized (this) {
            if (!shutdown || terminated || !streams.isEmpty()) {
                return;
            }
            terminated = true;
            l = listener;
        }
        server.transportTerminated();
        if (l != null) {
            l.transportTerminated();
        }
    }

    @Override
    public ScheduledExecutorService getScheduledExecutorService() {
        return server.scheduler();
    }

    @Override
    public InternalLogId getLogId() {
        return logId;
    }

    @Override
    public ListenableFuture<SocketStats> getStats() {
        return Futures.immediateFuture(null);
    }
}
