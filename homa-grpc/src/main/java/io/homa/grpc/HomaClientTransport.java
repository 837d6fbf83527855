package io.homa.grpc;

import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ClientStreamTracer;
import io.grpc.Grpc;
import io.grpc.InternalChannelz.SocketStats;
import io.grpc.InternalLogId;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.SecurityLevel;
import io.grpc.Status;
import io.grpc.SynchronizationContext;
import io.grpc.internal.ClientStream;
import io.grpc.internal.ClientStreamListener.RpcProgress;
import io.grpc.internal.ConnectionClientTransport;
import io.grpc.internal.FailingClientStream;
import io.grpc.internal.GrpcAttributes;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.SimpleDisconnectError;
import io.grpc.internal.StatsTraceContext;
import io.netty.buffer.Unpooled;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * A channel's "connection" to one server address. Homa has no connections: {@link #start} sends
 * one PING frame and reports the transport ready when the server answers (or shut down if it does
 * not, so that gRPC tries the next address and reports UNAVAILABLE), and every call then is its
 * own exchange of Homa RPCs through the channel's {@link ClientEndpoint}.
 */
final class HomaClientTransport implements ConnectionClientTransport {
    private static final Logger log = LoggerFactory.getLogger(HomaClientTransport.class);

    private final HomaTransportFactory factory;
    private final InetSocketAddress server;
    private final String authority;
    private final String userAgent;
    private final InternalLogId logId;
    private final Set<HomaClientStream> streams = new HashSet<>();
    private Attributes attributes;
    private Listener listener;
    private int inUse;
    private Status shutdownStatus;
    private boolean terminated;
    /**
     * Where the calls into gRPC's {@link Listener} wait their turn. Each is queued under the
     * transport's lock, with the change it reports, and run after the lock is released, one at a
     * time: so gRPC hears every change in the order it happened (in use, then not; shut down, then
     * terminated), whichever threads made them. Calling the listener straight after the lock
     * could reorder two reports made on two threads: a subchannel told "not in use" before "in
     * use" would stay in use for good, and one told "terminated" before "shut down" never
     * terminates its channel.
     */
    private final SynchronizationContext listenerCalls = new SynchronizationContext(
            (t, e) -> log.error("gRPC's transport listener threw", e));
    /** The two in-use reports, made once (calls one at a time turn the transport in use and back every call). */
    private Runnable reportInUse;
    private Runnable reportNotInUse;

    HomaClientTransport(HomaTransportFactory factory, InetSocketAddress server, String authority,
                        String userAgent, Attributes eagAttributes) {
        this.factory = factory;
        this.server = server;
        this.authority = authority;
        this.userAgent = GrpcUtil.getGrpcUserAgent("homa", userAgent);
        this.logId = InternalLogId.allocate(getClass(), server.toString());
        this.attributes = Attributes.newBuilder()
                .set(GrpcAttributes.ATTR_SECURITY_LEVEL, SecurityLevel.NONE)
                .set(GrpcAttributes.ATTR_CLIENT_EAG_ATTRS, eagAttributes)
                .set(Grpc.TRANSPORT_ATTR_REMOTE_ADDR, server)
                .set(Grpc.TRANSPORT_ATTR_LOCAL_ADDR, factory.endpoint().socket().localAddress())
                .build();
    }

    ClientEndpoint endpoint() {
        return factory.endpoint();
    }

    InetSocketAddress server() {
        return server;
    }

    String authority() {
        return authority;
    }

    int maxInboundMessageSize() {
        return factory.maxInboundMessageSize();
    }

    @Override
    public Runnable start(Listener listener) {
        synchronized (this) {
            this.listener = listener;
            this.reportInUse = () -> listener.transportInUse(true);
            this.reportNotInUse = () -> listener.transportInUse(false);
        }
        ping(Duration.ofNanos(factory.connectTimeoutNanos())).whenComplete((rtt, error) -> {
            // Whatever fails here (the user's transport filters run here) must still end the
            // connection attempt: gRPC would otherwise wait for this transport forever.
            try {
                if (error == null) {
                    ready();
                } else {
                    Status s = Failures.toStatus(error, null)
                            .augmentDescription("no homa-grpc server answered at " + server);
                    shutdown(s.getCode() == Status.Code.INTERNAL ? s : Status.UNAVAILABLE.withDescription(s.getDescription()),
                            SimpleDisconnectError.CONNECTION_TIMED_OUT);
                }
            } catch (Throwable t) {
                log.warn("homa-grpc transport to {}: starting it failed", server, t);
                shutdown(Status.INTERNAL.withDescription("starting the transport to " + server + " failed: " + t)
                        .withCause(t), SimpleDisconnectError.UNKNOWN);
            }
        });
        return null;
    }

    /**
     * The server answered the ping: the attributes get the TLS session (the ping agreed keys if
     * the socket is secured) and go through gRPC's transport filters (user code: outside the
     * lock), then gRPC hears the transport is ready, unless it was shut down meanwhile (it heard
     * the end already).
     */
    private void ready() {
        javax.net.ssl.SSLSession tls = endpoint().socket().tlsSession(server);
        Attributes a;
        synchronized (this) {
            if (shutdownStatus != null) {
                return;
            }
            a = attributes;
        }
        if (tls != null) {
            a = a.toBuilder().set(Grpc.TRANSPORT_ATTR_SSL_SESSION, tls)
                    .set(GrpcAttributes.ATTR_SECURITY_LEVEL, SecurityLevel.PRIVACY_AND_INTEGRITY).build();
        }
        a = listener.filterTransport(a);
        synchronized (this) {
            attributes = a;
            if (shutdownStatus == null) {
                listenerCalls.executeLater(listener::transportReady);
            }
        }
        listenerCalls.drain();
    }

    /** One PING frame; completes with the round trip in nanoseconds. */
    private CompletableFuture<Long> ping(Duration timeout) {
        long start = System.nanoTime();
        return endpoint().socket().call(server, Frame.ping(), timeout).thenApply(bytes -> {
            try {
                Frame.Reply reply = Frame.Reply.decode(Unpooled.wrappedBuffer(bytes));
                if (reply.code != Frame.Reply.ACK) {
                    throw Status.UNAVAILABLE.withDescription("the server refused: reply code " + reply.code)
                            .asRuntimeException();
                }
            } catch (Frame.Malformed e) {
                throw Status.INTERNAL.withDescription("not a homa-grpc server at " + server + ": " + e.getMessage())
                        .asRuntimeException();
            }
            return System.nanoTime() - start;
        });
    }

    @Override
    public ClientStream newStream(MethodDescriptor<?, ?> method, Metadata headers, CallOptions callOptions,
                                  ClientStreamTracer[] tracers) {
        StatsTraceContext stats = StatsTraceContext.newClientContext(tracers, getAttributes(), headers);
        Status shutdown = shutdownStatus();
        if (shutdown != null) {
            return new FailingClientStream(shutdown, RpcProgress.REFUSED, tracers);
        }
        headers.discardAll(GrpcUtil.USER_AGENT_KEY);
        headers.put(GrpcUtil.USER_AGENT_KEY, userAgent);
        return new HomaClientStream(this, endpoint().newStreamId(), method, headers, callOptions, stats);
    }

    /**
     * A stream starts; false if the transport is shut down. Called under the stream's lock, so it
     * only queues what gRPC is to hear: the stream calls {@link #reportToListener} after its lock.
     */
    boolean register(HomaClientStream stream) {
        synchronized (this) {
            if (shutdownStatus != null) {
                return false;
            }
            streams.add(stream);
            endpoint().add(stream);
            if (stream.countsForInUse() && inUse++ == 0) {
                listenerCalls.executeLater(reportInUse);
            }
        }
        return true;
    }

    /** Runs the listener calls queued so far (by this thread or others; any thread, no lock held). */
    void reportToListener() {
        listenerCalls.drain();
    }

    /** A stream ended. */
    void unregister(HomaClientStream stream) {
        boolean report;
        synchronized (this) {
            if (!streams.remove(stream)) {
                return;
            }
            endpoint().remove(stream);
            report = stream.countsForInUse() && --inUse == 0;
            if (report) {
                listenerCalls.executeLater(reportNotInUse);
            }
            report |= terminateIfDone();
        }
        if (report) { // (a thread that queues drains: one that queued nothing has nothing to make sure of)
            listenerCalls.drain();
        }
    }

    /** Under the lock: once shut down with no stream left, queues {@code transportTerminated} (once); whether it did. */
    private boolean terminateIfDone() {
        if (shutdownStatus != null && streams.isEmpty() && !terminated) {
            terminated = true;
            listenerCalls.executeLater(listener::transportTerminated);
            return true;
        }
        return false;
    }

    synchronized Status shutdownStatus() {
        return shutdownStatus;
    }

    @Override
    public void ping(PingCallback callback, Executor executor) {
        ping(Duration.ofSeconds(20)).whenComplete((rtt, error) -> executor.execute(() -> {
            if (error == null) {
                callback.onSuccess(rtt);
            } else {
                callback.onFailure(Failures.toStatus(error, null));
            }
        }));
    }

    @Override
    public void shutdown(Status reason) {
        shutdown(reason, SimpleDisconnectError.SUBCHANNEL_SHUTDOWN);
    }

    /**
     * Refuses new streams from now on and tells gRPC; then, once no stream is left (now, or when
     * the last ends in {@link #unregister}), that the transport terminated. Both reports go
     * through {@link #listenerCalls}, so gRPC hears them in that order even when the last
     * stream ends on another thread while it hears the first.
     */
    private void shutdown(Status reason, SimpleDisconnectError why) {
        synchronized (this) {
            if (shutdownStatus != null) {
                return;
            }
            shutdownStatus = reason;
            listenerCalls.executeLater(() -> listener.transportShutdown(reason, why));
            terminateIfDone();
        }
        listenerCalls.drain();
    }

    @Override
    public void shutdownNow(Status reason) {
        shutdown(reason);
        List<HomaClientStream> copy;
        synchronized (this) {
            copy = new ArrayList<>(streams);
        }
        for (HomaClientStream s : copy) {
            s.cancel(reason);
        }
    }

    @Override
    public synchronized Attributes getAttributes() {
        return attributes;
    }

    @Override
    public InternalLogId getLogId() {
        return logId;
    }

    @Override
    public ListenableFuture<SocketStats> getStats() {
        return Futures.immediateFuture(null);
    }

    @Override
    public String toString() {
        return "HomaClientTransport{" + logId.getId() + ", server=" + server + "}";
    }
}
