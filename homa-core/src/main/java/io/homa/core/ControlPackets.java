package io.homa.core;

import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * Control packets encoded and waiting for {@link HomaEngine#pollTransmit}, which sends them before
 * any DATA, in the order they were queued. Their buffers are pooled, so a busy engine allocates
 * none. Each packet counts as sent (its {@code PACKETS_SENT_*} counter) when queued.
 */
final class ControlPackets implements GrantScheduler.Sink {
    /** Room for the largest control packet: CUTOFFS, or an ACK with its most entries. */
    private static final int CAPACITY = Math.max(WireFormat.CUTOFFS_LENGTH,
            WireFormat.ACK_OFF_ENTRIES + WireFormat.MAX_ACKS * WireFormat.ACK_ENTRY);

    /** One encoded packet and where it goes. */
    private static final class Packet {
        final ByteBuffer buffer = ByteBuffer.allocate(CAPACITY);
        InetSocketAddress destination;
    }

    private final EngineCounters counters;
    private final ArrayDeque<Packet> queue = new ArrayDeque<>();
    private final ArrayDeque<Packet> pool = new ArrayDeque<>();

    ControlPackets(EngineCounters counters) {
        this.counters = counters;
    }

    /** A packet that is the common header alone: RPC_UNKNOWN, BUSY, NEED_ACK or OVERLOADED. */
    void bare(InetSocketAddress to, PacketType type, long senderId, Counter counter) {
        Packet c = take(to);
        PacketEncoder.bare(c.buffer, type, senderId);
        queue(c, counter);
    }

    /** The grant scheduler's decision for {@code m} goes out as a GRANT. */
    @Override
    public void grant(IncomingMessage m, int newGranted, int priority) {
        Packet c = take(m.rpc.peer.address);
        PacketEncoder.grant(c.buffer, m.rpc.id, newGranted, priority);
        queue(c, Counter.PACKETS_SENT_GRANT);
    }

    void resend(InetSocketAddress to, long rpcId, int offset, int length, int priority) {
        Packet c = take(to);
        // A client always asks for the server's uptime, should the server not know the RPC.
        int flags = RpcIds.isClientId(rpcId) ? WireFormat.RESEND_FLAG_WANTS_UPTIME : 0;
        PacketEncoder.resend(c.buffer, rpcId, offset, length, priority, flags);
        queue(c, Counter.PACKETS_SENT_RESEND);
        counters.observer.resendSent(to, rpcId, offset, length);
    }

    /** RPC_UNKNOWN_SINCE: a server does not know the client's RPC, and has been up this long. */
    void rpcUnknownSince(InetSocketAddress to, long senderId, long incarnation, long uptimeNanos) {
        Packet c = take(to);
        PacketEncoder.rpcUnknownSince(c.buffer, senderId, incarnation, uptimeNanos);
        queue(c, Counter.PACKETS_SENT_RPC_UNKNOWN_SINCE);
    }

    void cutoffs(InetSocketAddress to, long rpcId, int[] cutoffs, int version, int unscheduledUnits) {
        Packet c = take(to);
        PacketEncoder.cutoffs(c.buffer, rpcId, cutoffs, version, unscheduledUnits);
        queue(c, Counter.PACKETS_SENT_CUTOFFS);
    }

    /** An ACK of the first {@code n} ids; it names no single RPC, so its sender id is the first of them. */
    void ack(InetSocketAddress to, long[] ids, int[] ports, int n) {
        Packet c = take(to);
        PacketEncoder.ack(c.buffer, ids[0], ids, ports, n);
        queue(c, Counter.PACKETS_SENT_ACK);
    }

    /**
     * Copies the oldest waiting packet into {@code out} at its position (advancing it).
     *
     * @return the packet's destination, or {@code null} if none waits
     */
    InetSocketAddress writeNext(ByteBuffer out) {
        Packet c = queue.poll();
        if (c == null) {
            return null;
        }
        out.put(c.buffer.array(), 0, c.buffer.position());
        InetSocketAddress to = c.destination;
        c.destination = null;
        pool.add(c);
        return to;
    }

    boolean isEmpty() {
        return queue.isEmpty();
    }

    int size() {
        return queue.size();
    }

    /** A free packet, its buffer cleared, for {@code to}. */
    private Packet take(InetSocketAddress to) {
        Packet c = pool.poll();
        if (c == null) {
            c = new Packet();
        }
        c.buffer.clear();
        c.destination = to;
        return c;
    }

    private void queue(Packet c, Counter counter) {
        counters.bump(counter);
        queue.add(c);
    }
}
