package io.homa.grpc;

import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * The address {@code homa://} targets resolve to: a Homa server's socket address, in a type of
 * its own so that grpc-java's channel registry hands such targets to homa-grpc alone.
 */
final class HomaSocketAddress extends SocketAddress {
    private static final long serialVersionUID = 1L;

    private final InetSocketAddress address;

    HomaSocketAddress(InetSocketAddress address) {
        this.address = address;
    }

    InetSocketAddress address() {
        return address;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HomaSocketAddress && ((HomaSocketAddress) o).address.equals(address);
    }

    @Override
    public int hashCode() {
        return address.hashCode();
    }

    @Override
    public String toString() {
        return "homa://" + address.getHostString() + ":" + address.getPort();
    }
}
