package io.homa.bench;

import java.net.InetSocketAddress;

/**
 * {@code udp-spin}: a raw non-blocking {@code DatagramChannel} ping-pong in which both sides spin
 * instead of sleeping: the server's thread polls its socket without pause, and the client's call
 * sends its datagram and polls for the answer on the calling thread. No protocol, no hand-off, no
 * wake-up: the floor a busy-poll mode can aim for. It costs a busy core on each side while it runs.
 * Messages of at most 1,400 bytes, one call at a time per client.
 */
public final class UdpSpinTransport implements Transport {
    @Override
    public String name() {
        return Transports.UDP_SPIN;
    }

    @Override
    public int maxMessageLength() {
        return UdpSpinClient.MAX_MESSAGE;
    }

    @Override
    public EchoServer startServer() {
        return new UdpSpinServer();
    }

    @Override
    public EchoClient connect(InetSocketAddress server) {
        return new UdpSpinClient(server);
    }

    /** One call at a time per client, on the caller's thread: a latency floor, not a rate. */
    @Override
    public boolean unloadedOnly() {
        return true;
    }

    @Override
    public String toString() {
        return name();
    }
}
