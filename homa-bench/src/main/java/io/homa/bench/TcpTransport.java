package io.homa.bench;

import java.net.InetSocketAddress;

/** The TCP baselines: {@code tcp-single} (one multiplexed connection) and {@code tcp-pool}. */
public final class TcpTransport implements Transport {
    private final boolean pooled;

    private TcpTransport(boolean pooled) {
        this.pooled = pooled;
    }

    /** One multiplexed connection per client. */
    public static TcpTransport single() {
        return new TcpTransport(false);
    }

    /** A pool of connections per client, one per outstanding call. */
    public static TcpTransport pool() {
        return new TcpTransport(true);
    }

    @Override
    public String name() {
        return pooled ? Transports.TCP_POOL : Transports.TCP_SINGLE;
    }

    @Override
    public int maxMessageLength() {
        return TcpFrames.MAX_PAYLOAD;
    }

    @Override
    public EchoServer startServer() {
        return new TcpEchoServer();
    }

    @Override
    public EchoServer startServer(int port) {
        return new TcpEchoServer(new TcpEchoServer.EchoHandler(), port);
    }

    @Override
    public EchoClient connect(InetSocketAddress server) {
        return pooled ? new TcpPoolClient(server) : new TcpSingleClient(server);
    }

    @Override
    public String toString() {
        return name();
    }
}
