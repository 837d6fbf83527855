package io.homa.core.sim;

import io.homa.core.Counter;
import io.homa.core.CountingPayloadMemory;
import io.homa.core.EngineConfig;
import io.homa.core.HomaEngine;
import io.homa.core.wire.DecodedPacket;
import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketDecoder;
import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The body of the engine fuzz targets, shared by the Jazzer target ({@link EngineFuzzTest}) and its
 * jqwik twin ({@link EngineFuzzPropertyTest}).
 *
 * <p>Two honest hosts, A and B, run echo RPCs to each other in the simulated network. Two hostile
 * addresses inject packets that the fuzzer's bytes describe, read as a small program (see
 * {@link FuzzInput}): random datagrams, mutated copies and replays of honest packets, and
 * well-formed DATA, GRANT, RESEND, RPC_UNKNOWN, BUSY, NEED_ACK, CUTOFFS and ACK packets naming the
 * honest RPCs' ids (both sides), their own ids or random ones, with offsets past the end, lengths
 * that change mid-message and claims up to and beyond {@code maxMessageLength}; the program also
 * moves time and starts more honest RPCs.
 *
 * <p>Invariants: nothing is thrown out of an engine; after every step the memory for incoming
 * messages stays within {@code maxBufferedBytes}, every peer's within
 * {@code maxBufferedBytesPerPeer}, the outgoing bytes within {@code maxOutgoingBytes}; a hostile
 * address hears only about RPC ids it named itself; every honest RPC completes exactly once with the
 * right bytes, with no timeout, failure or restart; and once the hostile peers stop, both engines
 * drain to no state at all.
 */
final class EngineFuzzTarget {
    /** Tight limits, so that the fuzzer reaches them: two hostile peers at their per-peer limit leave room for the honest RPCs. */
    static final EngineConfig CFG = EngineConfig.builder().linkMbps(10_000)
            .maxMessageLength(1 << 20)
            .maxServerRpcsPerPeer(16).maxRpcs(1_000)
            .maxBufferedBytesPerPeer(1 << 20).maxBufferedBytes(8 << 20)
            .maxOutgoingBytes(64 << 20)
            .build();
    private static final int MAX_HONEST_CALLS = 6;
    private static final int[] HONEST_SIZES = {0, 1, 1432, 5_000, 40_000, 100_000, 150_000};
    private static final int MAX_OPS = 3_000;
    private static final long HOSTILE_PHASE_NANOS = 300_000_000L;
    private static final int MAX_CAPTURED = 300;

    // Figures over every execution in this JVM, for the report printed by the tests.
    static final AtomicLong EXECUTIONS = new AtomicLong();
    static final AtomicLong HOSTILE_PACKETS = new AtomicLong();
    static final AtomicLong BUFFERED_HIGH_WATER = new AtomicLong();
    static final AtomicLong PEER_BUFFERED_HIGH_WATER = new AtomicLong();
    static final AtomicLong OUTGOING_HIGH_WATER = new AtomicLong();
    /** Hostile packets the honest engines refused because they named another peer's RPC. */
    static final AtomicLong WRONG_PEER_DROPS = new AtomicLong();

    private final SimNetwork net;
    private final SimHost a;
    private final SimHost b;
    private final InetSocketAddress[] hostile = {
            new InetSocketAddress("10.66.0.1", 4000), new InetSocketAddress("10.66.0.2", 5000)};
    private final RpcLedger ledger;
    private final List<byte[]> captured = new ArrayList<>();
    /** Sender ids of the most recent honest packets, a ring. */
    private final long[] honestIds = new long[512];
    private int honestIdCount;
    /** Every RPC id (low bit cleared) that a hostile address has named in a valid packet. */
    private final Set<Long> namedByHostile = new HashSet<>();
    private final DecodedPacket scratch = new DecodedPacket();
    private final SplittableRandom payloads = new SplittableRandom(7);
    private int hostilePackets;
    /** Aim only at the honest RPCs: every packet names a recent honest id (or is a mutation or replay). */
    private final boolean aimAtHonest;
    /** Received payload memory of each engine: every buffer must come back exactly once. */
    private final CountingPayloadMemory memoryA = new CountingPayloadMemory();
    private final CountingPayloadMemory memoryB = new CountingPayloadMemory();

    private EngineFuzzTarget(boolean aimAtHonest) {
        this.aimAtHonest = aimAtHonest;
        net = new SimNetwork(1);
        a = net.addHost(CFG);
        b = net.addHost(CFG);
        ledger = new RpcLedger(net).ignoreRequestsFrom(hostile[0]).ignoreRequestsFrom(hostile[1]);
        ledger.attach(a);
        ledger.attach(b);
        a.engine().setPayloadMemory(memoryA);
        b.engine().setPayloadMemory(memoryB);
        net.intercept(this::watch);
    }

    /** Runs one input; throws (an assertion or whatever escaped an engine) when an invariant breaks. */
    static void run(byte[] input) {
        run(input, false);
    }

    /**
     * Runs one input. With {@code aimAtHonest} the program's packets all name the ids of recent
     * honest RPCs (as their client or their server would), or copy honest packets.
     */
    static void run(byte[] input, boolean aimAtHonest) {
        EngineFuzzTarget t = new EngineFuzzTarget(aimAtHonest);
        t.execute(new FuzzInput(input));
        EXECUTIONS.incrementAndGet();
        HOSTILE_PACKETS.addAndGet(t.hostilePackets);
        for (SimHost h : List.of(t.a, t.b)) {
            BUFFERED_HIGH_WATER.accumulateAndGet(h.engine().bufferedBytesHighWater(), Math::max);
            PEER_BUFFERED_HIGH_WATER.accumulateAndGet(h.engine().peerBufferedBytesHighWater(), Math::max);
            OUTGOING_HIGH_WATER.accumulateAndGet(h.engine().outgoingBytesHighWater(), Math::max);
            WRONG_PEER_DROPS.addAndGet(h.engine().drops(DropReason.WRONG_PEER));
        }
    }

    /** One line with the figures gathered so far. */
    static String report() {
        return "engine fuzz target: " + EXECUTIONS.get() + " executions, " + HOSTILE_PACKETS.get()
                + " hostile packets; high-water marks: buffered " + BUFFERED_HIGH_WATER.get() + " B (limit "
                + CFG.maxBufferedBytes + "), one peer's buffered " + PEER_BUFFERED_HIGH_WATER.get() + " B (limit "
                + CFG.maxBufferedBytesPerPeer + "), outgoing " + OUTGOING_HIGH_WATER.get() + " B (limit "
                + CFG.maxOutgoingBytes + "); " + WRONG_PEER_DROPS.get() + " packets naming another peer's RPC refused";
    }

    private void execute(FuzzInput in) {
        ledger.call(a, b, honestPayload(1_000));
        ledger.call(b, a, honestPayload(60_000));
        long start = net.now();
        int ops = 0;
        while (!in.exhausted() && ops++ < MAX_OPS && net.now() - start < HOSTILE_PHASE_NANOS) {
            int op = in.below(8);
            if (aimAtHonest) {
                if (op == 1) {
                    op = 5; // no junk: packets about the honest RPCs only
                }
                if (ledger.allFinished() && ledger.calls().size() < 4 * MAX_HONEST_CALLS) {
                    // always an honest RPC in flight to aim at
                    ledger.call(a, b, honestPayload(HONEST_SIZES[ledger.calls().size() % HONEST_SIZES.length]));
                }
            }
            switch (op) {
                case 0 -> net.runFor((1 + in.u8()) * (aimAtHonest ? 2_000L : 20_000L));
                case 1 -> inject(in, in.bytes(in.u8() % 120));
                case 2 -> inject(in, mutated(in));
                case 3 -> inject(in, captured.isEmpty() ? new byte[0] : captured.get(in.below(captured.size())).clone());
                case 4 -> {
                    if (ledger.calls().size() < MAX_HONEST_CALLS) {
                        boolean fromA = in.bool();
                        ledger.call(fromA ? a : b, fromA ? b : a, honestPayload(HONEST_SIZES[in.below(HONEST_SIZES.length)]));
                    }
                }
                default -> inject(in, structured(in));
            }
            net.runFor(5_000);
            checkLimits();
        }
        // The hostile peers stop. Every honest RPC completes, exactly once, and nothing is left.
        assertTrue(net.runUntil(ledger::allFinished, 20_000_000_000L),
                () -> "honest RPCs did not finish: A " + a.engine().describe() + " | B " + b.engine().describe());
        ledger.assertAllExactlyOnce();
        for (SimHost h : List.of(a, b)) {
            HomaEngine e = h.engine();
            assertEquals(0, e.counter(Counter.TIMEOUTS), "honest RPC timed out");
            assertEquals(0, e.counter(Counter.CLIENT_RPCS_FAILED), "honest RPC failed");
            assertEquals(0, e.counter(Counter.REQUEST_RESTARTS), "honest request restarted");
        }
        assertTrue(net.runUntilIdle(20_000_000_000L),
                () -> "engines never went idle: A " + a.engine().describe() + " | B " + b.engine().describe());
        RpcLedger.assertQuiescent(net);
        checkLimits();
        ledger.releaseOutcomes();
        for (CountingPayloadMemory m : List.of(memoryA, memoryB)) {
            assertEquals(0, m.live(), () -> m.live() + " of " + m.handedOut() + " payload buffers never released");
        }
    }

    private void checkLimits() {
        for (SimHost h : List.of(a, b)) {
            HomaEngine e = h.engine();
            assertTrue(e.bufferedBytesHighWater() <= CFG.maxBufferedBytes,
                    () -> "buffered " + e.bufferedBytesHighWater() + " > " + CFG.maxBufferedBytes);
            assertTrue(e.peerBufferedBytesHighWater() <= CFG.maxBufferedBytesPerPeer,
                    () -> "one peer buffered " + e.peerBufferedBytesHighWater() + " > " + CFG.maxBufferedBytesPerPeer);
            assertTrue(e.outgoingBytesHighWater() <= CFG.maxOutgoingBytes,
                    () -> "outgoing " + e.outgoingBytesHighWater() + " > " + CFG.maxOutgoingBytes);
            assertTrue(e.bufferedBytes() >= 0 && e.outgoingBytes() >= 0, e::describe);
            for (InetSocketAddress h2 : hostile) {
                assertTrue(e.bufferedBytes(h2) <= CFG.maxBufferedBytesPerPeer);
            }
        }
    }

    private byte[] honestPayload(int n) {
        byte[] p = new byte[n];
        payloads.nextBytes(p);
        return p;
    }

    // ------------------------------------------------------------------ the wire

    /** Sees every packet entering the switch: books hostile ids, checks what hostile peers hear, keeps honest packets. */
    private boolean watch(SimPacket p) {
        if (isHostile(p.source())) {
            bookNamed(p.bytes());
        } else if (isHostile(p.destination())) {
            assertTrue(decode(p.bytes()), "an engine sent an invalid packet");
            long id = scratch.senderId & ~1L;
            assertTrue(namedByHostile.contains(id),
                    () -> "a hostile peer was told about RPC " + id + " it never named: " + scratch);
            if (scratch.type == PacketType.ACK) {
                for (int i = 0; i < scratch.ackCount; i++) {
                    long acked = scratch.ackIds[i];
                    assertTrue(namedByHostile.contains(acked), () -> "ACK to a hostile peer names RPC " + acked);
                }
            }
        } else {
            if (captured.size() < MAX_CAPTURED) {
                captured.add(p.bytes().clone());
            }
            if (decode(p.bytes())) {
                honestIds[honestIdCount++ % honestIds.length] = scratch.senderId;
            }
        }
        return true;
    }

    /**
     * Books the id of every valid packet in a hostile datagram, walked as the engine walks it (a
     * datagram may hold several packets back to back, as UDP GRO coalesces them).
     */
    private void bookNamed(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        int stride = PacketDecoder.packetLength(b, 0, bytes.length);
        if (stride <= 0 || stride >= bytes.length) {
            stride = bytes.length;
        }
        for (int at = 0; at < bytes.length; at += stride) {
            if (PacketDecoder.decode(b, at, Math.min(stride, bytes.length - at), CFG.maxMessageLength, scratch) == null) {
                namedByHostile.add(scratch.senderId & ~1L);
            }
        }
    }

    private boolean decode(byte[] bytes) {
        return PacketDecoder.decode(ByteBuffer.wrap(bytes), CFG.maxMessageLength, scratch) == null;
    }

    private boolean isHostile(InetSocketAddress address) {
        return address.equals(hostile[0]) || address.equals(hostile[1]);
    }

    private void inject(FuzzInput in, byte[] datagram) {
        InetSocketAddress from = hostile[in.below(2)];
        SimHost victim = in.bool() ? a : b;
        hostilePackets++;
        net.inject(from, victim.address(), datagram, in.below(8));
    }

    // ------------------------------------------------------------------ hostile packets

    private byte[] mutated(FuzzInput in) {
        if (captured.isEmpty()) {
            return in.bytes(in.u8() % 64);
        }
        byte[] p = captured.get(in.below(captured.size())).clone();
        int flips = 1 + in.below(4);
        for (int i = 0; i < flips; i++) {
            p[in.below(p.length)] = (byte) in.u8();
        }
        if (in.below(4) == 0) {
            p = Arrays.copyOf(p, in.below(p.length + 1));
        }
        return p;
    }

    /** An id: an honest RPC's (either side), one of a few of the hostile peer's own, or anything. */
    private long id(FuzzInput in) {
        if (aimAtHonest && honestIdCount > 0) {
            return honestId(honestIdCount - 1 - in.below(Math.min(honestIdCount, 50))) ^ in.below(2);
        }
        long id = switch (in.below(4)) {
            case 0, 1 -> honestIdCount == 0 ? 2 : honestId(in.below(Math.min(honestIdCount, honestIds.length))) ^ in.below(2);
            case 2 -> 2L * (1 + in.below(20)) + in.below(2);
            default -> in.i64();
        };
        return (id & ~1L) == 0 ? 2 : id;
    }

    /** The {@code k}-th honest id seen (k counted from the first), if still in the ring. */
    private long honestId(int k) {
        int oldest = Math.max(0, honestIdCount - honestIds.length);
        return honestIds[Math.max(k, oldest) % honestIds.length];
    }

    private int length(FuzzInput in) {
        int max = CFG.maxMessageLength;
        return switch (in.below(10)) {
            case 0 -> 0;
            case 1 -> 1;
            case 2 -> 100;
            case 3 -> CFG.segmentPayload();
            case 4 -> CFG.unscheduledLimit();
            case 5 -> CFG.unscheduledLimit() + 1 + in.below(70_000);
            case 6 -> max;
            case 7 -> max + 1 + in.below(1000); // beyond the limit
            default -> in.below(max + 1);
        };
    }

    private int offset(FuzzInput in, int length, int segment) {
        return switch (in.below(5)) {
            case 0 -> 0;
            case 1 -> Math.max(0, length - segment);
            case 2 -> length + in.below(100_000); // past the end
            case 3 -> CFG.unscheduledLimit() + in.below(3 * CFG.segmentPayload());
            default -> in.below(Math.max(1, length));
        };
    }

    private byte[] structured(FuzzInput in) {
        long id = id(in);
        ByteBuffer out = ByteBuffer.allocate(CFG.maxDatagram());
        switch (in.below(8)) {
            case 0 -> {
                int len = length(in);
                int seg = len == 0 && in.below(4) != 0 ? 0 : 1 + in.below(CFG.segmentPayload());
                int offset = offset(in, len, seg);
                int incoming = switch (in.below(3)) {
                    case 0 -> len;
                    case 1 -> Math.min(len, CFG.unscheduledLimit());
                    default -> in.i32();
                };
                long ack = in.bool() ? 0 : id(in) & ~1L;
                byte[] payload = new byte[seg];
                Arrays.fill(payload, (byte) 0xEE);
                PacketEncoder.data(out, id, len, incoming, offset, in.below(3), in.bool(), ack, 0,
                        ByteBuffer.wrap(payload), 0, seg);
            }
            case 1 -> PacketEncoder.grant(out, id, in.bool() ? in.below(CFG.maxMessageLength + 2) : in.i32(), in.below(9));
            case 2 -> PacketEncoder.resend(out, id, in.bool() ? in.below(200_000) : in.i32(),
                    switch (in.below(4)) {
                        case 0 -> -1;
                        case 1 -> in.below(3_000);
                        case 2 -> in.below(CFG.maxMessageLength);
                        default -> in.i32();
                    }, in.below(9));
            case 3 -> PacketEncoder.bare(out, PacketType.RPC_UNKNOWN, id);
            case 4 -> PacketEncoder.bare(out, PacketType.BUSY, id);
            case 5 -> PacketEncoder.bare(out, PacketType.NEED_ACK, id);
            case 6 -> {
                int[] cutoffs = new int[WireFormat.PRIORITY_LEVELS];
                for (int i = 0; i < cutoffs.length; i++) {
                    cutoffs[i] = in.bool() ? in.below(2_000_000) : in.i32();
                }
                PacketEncoder.cutoffs(out, id, cutoffs, in.u16(), in.u16());
            }
            default -> {
                int count = in.below(WireFormat.MAX_ACKS + 1);
                long[] ids = new long[WireFormat.MAX_ACKS];
                for (int i = 0; i < count; i++) {
                    ids[i] = id(in) & ~1L;
                }
                PacketEncoder.ack(out, id, ids, new int[WireFormat.MAX_ACKS], count);
            }
        }
        out.flip();
        byte[] bytes = new byte[out.remaining()];
        out.get(bytes);
        return bytes;
    }
}
