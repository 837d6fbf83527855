package io.homa.bench;

import java.net.InetSocketAddress;

/** {@code udp-raw}: one datagram each way, messages of at most 1,400 bytes. */
public final class UdpTransport implements Transport {
    @Override
    public String name() {
        return Transports.UDP_RAW;
    }

    @Override
    public int maxMessageLength() {
        return UdpRawClient.MAX_MESSAGE;
    }

    @Override
    public EchoServer startServer() {
        return new UdpEchoServer();
    }

    @Override
    public EchoClient connect(InetSocketAddress server) {
        return new UdpRawClient(server);
    }

    @Override
    public String toString() {
        return name();
    }
}
