package io.homa.bench;

import java.net.InetSocketAddress;

/**
 * {@code tcp-blocking}: what a Java developer writes without a framework. {@code java.net.Socket}
 * with {@code TCP_NODELAY}, a length-prefixed echo, a thread per connection on the server, and on
 * the client the calling thread doing the write and the blocking read itself (a connection per
 * caller thread). The baseline for the latency floor: two thread wake-ups per call, one on each
 * side's read.
 */
public final class TcpBlockingTransport implements Transport {
    @Override
    public String name() {
        return Transports.TCP_BLOCKING;
    }

    @Override
    public int maxMessageLength() {
        return TcpFrames.MAX_PAYLOAD;
    }

    @Override
    public EchoServer startServer() {
        return new TcpBlockingServer();
    }

    @Override
    public EchoClient connect(InetSocketAddress server) {
        return new TcpBlockingClient(server);
    }

    @Override
    public boolean blockingClients() {
        return true;
    }

    @Override
    public String toString() {
        return name();
    }
}
