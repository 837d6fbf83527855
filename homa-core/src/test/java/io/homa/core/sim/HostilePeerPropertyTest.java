package io.homa.core.sim;

import io.homa.core.EngineConfig;
import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A hostile peer sends random bytes, mutated copies of honest packets, honest packets replayed
 * from its own address, and well-formed packets with lies in them (huge lengths, other peers'
 * RPC ids, offsets past the end). Nothing may be thrown, memory stays within the limits, and the
 * honest RPCs alongside all complete exactly once.
 */
class HostilePeerPropertyTest {
    private static final int PER_PEER_RPCS = 32;
    private static final EngineConfig CFG = EngineConfig.builder().linkMbps(10_000)
            .maxServerRpcsPerPeer(PER_PEER_RPCS).build();

    @Property(tries = 60)
    void hostilePeer_cannotBreakHonestRpcsOrExhaustMemory(@ForAll long seed) {
        Seeds.run(seed, s -> runHostile(s));
    }

    private static void runHostile(long seed) {
        SimNetwork net = new SimNetwork(seed);
        SimHost a = net.addHost(CFG);
        SimHost b = net.addHost(CFG);
        SimHost evil = net.addHost(CFG);
        RpcLedger ledger = new RpcLedger(net).ignoreRequestsFrom(evil.address());
        ledger.attach(a);
        ledger.attach(b);
        List<byte[]> captured = new ArrayList<>();
        List<Long> honestIds = new ArrayList<>();
        net.intercept(p -> {
            if (!p.source().equals(evil.address()) && captured.size() < 500) {
                captured.add(p.bytes().clone());
                honestIds.add(ByteBuffer.wrap(p.bytes()).getLong(WireFormat.OFF_SENDER_ID));
            }
            return true;
        });
        SplittableRandom r = new SplittableRandom(seed);
        Workload w = Workload.named("w3");
        long memoryBound = (long) PER_PEER_RPCS * 64 * 1024 + (4L << 20);
        for (int round = 0; round < 200; round++) {
            if (round % 4 == 0) {
                byte[] req = new byte[Math.min(w.sample(r), 200_000)];
                r.nextBytes(req);
                ledger.call(r.nextBoolean() ? a : b, r.nextBoolean() ? b : a, req);
            }
            for (int k = 0; k < 5; k++) {
                SimHost victim = r.nextBoolean() ? a : b;
                net.inject(evil.address(), victim.address(), hostilePacket(r, captured, honestIds), r.nextInt(8));
            }
            net.runFor(20_000);
            for (SimHost h : List.of(a, b)) {
                assertTrue(h.engine().bufferedBytes() <= memoryBound,
                        "buffered " + h.engine().bufferedBytes() + " > " + memoryBound);
                assertTrue(h.engine().liveServerRpcs() <= PER_PEER_RPCS * 2 + ledger.calls().size());
            }
        }
        // Self-calls (a to a) are legal too; the ledger counts them as honest RPCs.
        assertTrue(net.runUntilIdle(60_000_000_000L), () -> "the network went idle: a " + a.engine().describe()
                + " | b " + b.engine().describe() + " | evil " + evil.engine().describe());
        ledger.assertAllExactlyOnce();
        assertTrue(a.engine().isQuiescent(), a.engine().describe());
        assertTrue(b.engine().isQuiescent(), b.engine().describe());
    }

    static byte[] hostilePacket(SplittableRandom r, List<byte[]> captured, List<Long> honestIds) {
        int kind = r.nextInt(6);
        if (kind == 0 || captured.isEmpty()) {
            byte[] junk = new byte[r.nextInt(120)];
            r.nextBytes(junk);
            if (junk.length > 4 && r.nextBoolean()) { // sometimes a valid-looking start
                junk[0] = 0x48;
                junk[1] = 0x4D;
                junk[2] = 1;
                junk[3] = (byte) (0x10 + r.nextInt(9));
            }
            return junk;
        }
        if (kind == 1) { // mutate an honest packet
            byte[] p = captured.get(r.nextInt(captured.size())).clone();
            int flips = 1 + r.nextInt(4);
            for (int i = 0; i < flips; i++) {
                p[r.nextInt(p.length)] = (byte) r.nextInt(256);
            }
            if (r.nextInt(4) == 0) {
                p = java.util.Arrays.copyOf(p, r.nextInt(p.length + 1));
            }
            return p;
        }
        if (kind == 2) { // replay an honest packet from the wrong address
            return captured.get(r.nextInt(captured.size())).clone();
        }
        long id = honestIds.isEmpty() || r.nextBoolean() ? r.nextLong() | 2 : honestIds.get(r.nextInt(honestIds.size()));
        id = (id & ~1L) == 0 ? 2 : id;
        ByteBuffer b = ByteBuffer.allocate(2000);
        switch (r.nextInt(7)) {
            case 0 -> { // DATA with a huge length and a random offset
                int len = r.nextBoolean() ? CFG.maxMessageLength : 1 + r.nextInt(10_000_000);
                int seg = 1 + r.nextInt(1400);
                int offset = r.nextInt(Math.max(1, len - seg));
                byte[] payload = new byte[seg];
                PacketEncoder.data(b, id & ~1L, len, r.nextInt(len + 1), offset, r.nextInt(3), r.nextBoolean(),
                        r.nextBoolean() ? 0 : honestIdOr(r, honestIds) & ~1L, 0, ByteBuffer.wrap(payload), 0, seg);
            }
            case 1 -> PacketEncoder.grant(b, id, r.nextInt(CFG.maxMessageLength), r.nextInt(8));
            case 2 -> PacketEncoder.resend(b, id, r.nextInt(1 << 20), r.nextInt(1 << 20) - 1, r.nextInt(8));
            case 3 -> PacketEncoder.bare(b, switch (r.nextInt(3)) {
                case 0 -> PacketType.RPC_UNKNOWN;
                case 1 -> PacketType.BUSY;
                default -> PacketType.NEED_ACK;
            }, id);
            case 4 -> PacketEncoder.cutoffs(b, id, new int[]{r.nextInt(), 0, 5, 9, 100, 10, 1, 0}, 1 + r.nextInt(100), 0);
            case 5 -> {
                long[] ids = new long[5];
                for (int i = 0; i < 5; i++) {
                    ids[i] = honestIdOr(r, honestIds) & ~1L;
                    if (ids[i] == 0) {
                        ids[i] = 2;
                    }
                }
                PacketEncoder.ack(b, id, ids, new int[5], 1 + r.nextInt(5));
            }
            default -> { // a DATA segment that changes an existing message's length
                PacketEncoder.data(b, id, 1 + r.nextInt(100_000), 0, 0, 1, false, 0, 0,
                        ByteBuffer.wrap(new byte[1]), 0, 1);
            }
        }
        b.flip();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    private static long honestIdOr(SplittableRandom r, List<Long> ids) {
        return ids.isEmpty() ? r.nextLong() : ids.get(r.nextInt(ids.size()));
    }
}
