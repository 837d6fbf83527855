package io.homa.core.sim;

import io.homa.core.wire.PacketDecoder;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/** One datagram in flight in the simulated network. */
public final class SimPacket {
    final InetSocketAddress source;
    final InetSocketAddress destination;
    final byte[] bytes;
    final int priority;
    /** Wire size including IP/UDP headers: what serialization time is computed from. */
    final int wireBytes;

    SimPacket(InetSocketAddress source, InetSocketAddress destination, byte[] bytes, int priority, int overhead) {
        this.source = source;
        this.destination = destination;
        this.bytes = bytes;
        this.priority = priority;
        this.wireBytes = bytes.length + overhead;
    }

    /** Whether this is a Homa DATA packet (faults are configured separately for data and control). */
    public boolean isData() {
        return PacketDecoder.isData(ByteBuffer.wrap(bytes));
    }

    public InetSocketAddress source() { return source; }

    public InetSocketAddress destination() { return destination; }

    public int priority() { return priority; }

    /** The datagram; do not modify. */
    public byte[] bytes() { return bytes; }
}
