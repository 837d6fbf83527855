package io.homa.core;

import io.homa.core.wire.DecodedPacket;
import io.homa.core.wire.PacketDecoder;
import io.homa.core.wire.PacketType;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Two engines joined by a hand-operated wire: tests move packets explicitly, look at each one,
 * and drop the ones they choose. Time only moves when the test says so.
 */
final class EnginePair {
    /** Defaults, but no pacer: the engine tests do not move time unless they say so. */
    static final EngineConfig CFG = EngineConfig.builder().pacerEnabled(false).build();
    static final long TICK = CFG.tickNanos;

    /** {@code n} bytes of a fixed pattern. */
    static ByteBuffer bytes(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + 7);
        }
        return ByteBuffer.wrap(b);
    }

    /** The bytes {@code writer} encodes, e.g. a packet a test plays to an engine. */
    static byte[] encode(Consumer<ByteBuffer> writer) {
        ByteBuffer b = ByteBuffer.allocate(2048);
        writer.accept(b);
        b.flip();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    /** One datagram seen on the wire. */
    record Packet(InetSocketAddress from, InetSocketAddress to, int priority, byte[] bytes, DecodedPacket decoded) {
        PacketType type() {
            return decoded.type;
        }
    }

    final InetSocketAddress addrA = new InetSocketAddress("127.0.0.1", 1001);
    final InetSocketAddress addrB = new InetSocketAddress("127.0.0.1", 1002);
    final HomaEngine a;
    final HomaEngine b;
    final List<Packet> wire = new ArrayList<>();
    final List<EngineEvent> eventsA = new ArrayList<>();
    final List<EngineEvent> eventsB = new ArrayList<>();
    long now = 1_000_000;
    private final ByteBuffer tx;

    EnginePair(EngineConfig cfg) {
        this(cfg, cfg);
    }

    EnginePair(EngineConfig ca, EngineConfig cb) {
        a = new HomaEngine(ca, 11);
        b = new HomaEngine(cb, 22);
        tx = ByteBuffer.allocate(Math.max(ca.maxDatagram() * ca.maxGsoSegments, cb.maxDatagram() * cb.maxGsoSegments));
    }

    HomaEngine peerOf(HomaEngine e) {
        return e == a ? b : a;
    }

    InetSocketAddress addressOf(HomaEngine e) {
        return e == a ? addrA : addrB;
    }

    /** Takes every datagram {@code from} wants to send now (recorded in {@link #wire}). */
    List<Packet> drain(HomaEngine from) {
        List<Packet> out = new ArrayList<>();
        while (true) {
            tx.clear();
            Transmit t = from.pollTransmit(now, tx);
            if (t == null) {
                break;
            }
            int pos = 0;
            for (int i = 0; i < t.segments(); i++) {
                int len = Math.min(t.segmentSize(), t.length() - pos);
                byte[] bytes = new byte[len];
                tx.get(pos, bytes);
                pos += len;
                DecodedPacket d = new DecodedPacket();
                if (PacketDecoder.decode(ByteBuffer.wrap(bytes), Integer.MAX_VALUE - 65_536, d) != null) {
                    throw new AssertionError("engine sent an invalid packet");
                }
                Packet p = new Packet(addressOf(from), t.destination(), t.priority(), bytes, d);
                out.add(p);
                wire.add(p);
            }
        }
        return out;
    }

    /** Delivers a packet to A or B; one addressed elsewhere (a test's third party) is lost. */
    void deliver(Packet p) {
        if (!p.to().equals(addrA) && !p.to().equals(addrB)) {
            return;
        }
        HomaEngine to = p.to().equals(addrA) ? a : b;
        to.onDatagram(now, p.from(), ByteBuffer.wrap(p.bytes()));
        collect();
    }

    /** Exchanges packets until neither side has anything to send; {@code keep} may drop some. */
    int exchange(Predicate<Packet> keep) {
        int moved = 0;
        while (true) {
            List<Packet> batch = new ArrayList<>(drain(a));
            batch.addAll(drain(b));
            if (batch.isEmpty()) {
                collect();
                return moved;
            }
            for (Packet p : batch) {
                if (keep.test(p)) {
                    deliver(p);
                    moved++;
                }
            }
        }
    }

    int exchange() {
        return exchange(p -> true);
    }

    /** Advances time to each engine's deadline in turn for {@code nanos}, exchanging packets. */
    void advance(long nanos, Predicate<Packet> keep) {
        long end = now + nanos;
        while (true) {
            long next = Math.min(a.nextDeadline(), b.nextDeadline());
            if (next > end) {
                now = end;
                return;
            }
            now = Math.max(now, next);
            a.onTimer(now);
            b.onTimer(now);
            exchange(keep);
        }
    }

    void advance(long nanos) {
        advance(nanos, p -> true);
    }

    void collect() {
        EngineEvent e;
        while ((e = a.pollEvent()) != null) {
            eventsA.add(e);
        }
        while ((e = b.pollEvent()) != null) {
            eventsB.add(e);
        }
    }

    /** B answers every request it has been handed with {@code response}. */
    void serveFromB(byte[] response) {
        for (EngineEvent e : eventsB) {
            if (e.kind() == EngineEvent.Kind.REQUEST) {
                b.respond(now, e.peer(), e.rpcId(), ByteBuffer.wrap(response));
            }
        }
    }

    List<Packet> sent(InetSocketAddress from, PacketType type) {
        return wire.stream().filter(p -> p.from().equals(from) && p.type() == type).toList();
    }
}
