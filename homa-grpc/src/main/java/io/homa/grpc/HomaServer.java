package io.homa.grpc;

import io.grpc.InternalChannelz.SocketStats;
import io.grpc.InternalInstrumented;
import io.grpc.ServerStreamTracer;
import io.grpc.internal.GrpcUtil;
import io.grpc.internal.InternalServer;
import io.grpc.internal.ServerListener;
import io.grpc.internal.SharedResourceHolder;
import io.homa.HomaConfig;
import io.homa.HomaException;
import io.homa.HomaSocket;

import java.io.IOException;
import java.net.SocketAddress;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The listening side of a gRPC server over Homa: one Homa socket, opened at {@link #start}, and
 * its one {@link HomaServerTransport}. The socket closes when the server has shut down and the
 * transport's last call has ended.
 */
final class HomaServer implements InternalServer {
    private final HomaConfig config;
    private final List<? extends ServerStreamTracer.Factory> tracerFactories;
    private final int maxInboundMessageSize;
    private HomaSocket socket;
    private ScheduledExecutorService scheduler;
    private ServerListener listener;
    private boolean shutdown;
    private boolean transportDone;

    HomaServer(HomaConfig config, List<? extends ServerStreamTracer.Factory> tracerFactories, int maxInboundMessageSize) {
        this.config = config;
        this.tracerFactories = tracerFactories;
        this.maxInboundMessageSize = maxInboundMessageSize;
    }

    @Override
    public void start(ServerListener listener) throws IOException {
        try {
            socket = HomaSocket.open(config);
        } catch (HomaException e) {
            throw new IOException("cannot open the Homa socket at " + config.bindAddress() + ": " + e.getMessage(), e);
        }
        synchronized (this) {
            this.listener = listener;
            scheduler = SharedResourceHolder.get(GrpcUtil.TIMER_SERVICE);
        }
        HomaServerTransport transport = new HomaServerTransport(this);
        transport.start(listener.transportCreated(transport));
        socket.serve(transport::handle);
    }

    HomaSocket socket() {
        return socket;
    }

    int maxInboundMessageSize() {
        return maxInboundMessageSize;
    }

    List<? extends ServerStreamTracer.Factory> tracerFactories() {
        return tracerFactories;
    }

    synchronized ScheduledExecutorService scheduler() {
        return scheduler;
    }

    @Override
    public void shutdown() {
        ServerListener l;
        synchronized (this) {
            if (shutdown) {
                return;
            }
            shutdown = true;
            l = listener;
        }
        if (l != null) {
            l.serverShutdown(); // the server then shuts the transport down; the socket closes after it
        }
        closeIfDone();
    }

    /** The transport's last call ended after shutdown. */
    void transportTerminated() {
        synchronized (this) {
            transportDone = true;
        }
        closeIfDone();
    }

    private void closeIfDone() {
        synchronized (this) {
            if (!shutdown || (!transportDone && listener != null) || scheduler == null) {
                return;
            }
            SharedResourceHolder.release(GrpcUtil.TIMER_SERVICE, scheduler);
            scheduler = null;
        }
        if (socket != null) {
            socket.close();
        }
    }

    @Override
    public SocketAddress getListenSocketAddress() {
        return socket == null ? config.bindAddress() : socket.localAddress();
    }

    @Override
    public InternalInstrumented<SocketStats> getListenSocketStats() {
        return null;
    }

    @Override
    public List<? extends SocketAddress> getListenSocketAddresses() {
        return List.of(getListenSocketAddress());
    }

    @Override
    public List<InternalInstrumented<SocketStats>> getListenSocketStatsList() {
        return List.of();
    }
}
