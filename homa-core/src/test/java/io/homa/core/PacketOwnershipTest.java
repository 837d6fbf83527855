package io.homa.core;

import io.homa.core.wire.DecodedPacket;
import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketDecoder;
import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.PacketType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Packets about an RPC are accepted only from the peer that owns it, for every packet type: a
 * third address that names an honest RPC's id (as the client or as the server would) neither
 * completes, restarts, frees, grants, retransmits nor re-prioritises it, and hears nothing about it
 * beyond the id it named itself. Also: RPC ids are unpredictable without the engine's seed.
 */
class PacketOwnershipTest {
    private static final EngineConfig CFG = EngineConfig.builder().pacerEnabled(false).build();
    private static final long TICK = CFG.tickNanos;
    private static final InetSocketAddress EVIL = new InetSocketAddress("127.0.0.1", 6666);
    private static final int REQUEST = 100_000;

    private static ByteBuffer bytes(int n, int salt) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + salt);
        }
        return ByteBuffer.wrap(b);
    }

    /** A packet of {@code type} naming {@code id}, with fields that would matter if it were accepted. */
    private static byte[] forged(PacketType type, long id, long ackedId) {
        ByteBuffer b = ByteBuffer.allocate(2048);
        switch (type) {
            case DATA -> {
                // A whole 10-byte message: as a response it would complete the client's RPC at once.
                byte[] payload = new byte[10];
                Arrays.fill(payload, (byte) 0xEE);
                PacketEncoder.data(b, id, 10, 10, 0, 1, false, 0, 0, ByteBuffer.wrap(payload), 0, 10);
            }
            case GRANT -> PacketEncoder.grant(b, id, REQUEST, 0);
            case RESEND -> PacketEncoder.resend(b, id, 0, -1, 7);
            case RPC_UNKNOWN, BUSY, NEED_ACK, OVERLOADED, CANCEL -> PacketEncoder.bare(b, type, id);
            case RPC_UNKNOWN_SINCE -> PacketEncoder.rpcUnknownSince(b, id, 7, 0);
            case CUTOFFS -> PacketEncoder.cutoffs(b, id, new int[8], 9, 0);
            case ACK -> PacketEncoder.ack(b, id, new long[]{ackedId}, new int[1], 1);
        }
        b.flip();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    /** Every packet {@code from} has queued for {@code EVIL} names only ids EVIL named ({@code named}). */
    private static void assertToldNothingNew(EnginePair p, HomaEngine from, Set<Long> named) {
        List<EnginePair.Packet> out = p.drain(from);
        List<EnginePair.Packet> keep = new ArrayList<>();
        for (EnginePair.Packet pk : out) {
            if (pk.to().equals(EVIL)) {
                assertTrue(named.contains(pk.decoded().senderId & ~1L), "EVIL was told about " + pk.decoded());
                if (pk.type() == PacketType.ACK) {
                    for (int i = 0; i < pk.decoded().ackCount; i++) {
                        assertTrue(named.contains(pk.decoded().ackIds[i]), "ACK to EVIL names " + pk.decoded());
                    }
                }
            } else {
                keep.add(pk);
            }
        }
        keep.forEach(p::deliver);
    }

    private static boolean namesAnRpc(PacketType type) {
        return type != PacketType.CUTOFFS && type != PacketType.ACK;
    }

    // ------------------------------------------------------------ a client RPC (on A, to B)

    @ParameterizedTest
    @EnumSource(PacketType.class)
    void clientRpc_packetFromThirdAddress_hasNoEffect(PacketType type) {
        EnginePair p = new EnginePair(CFG);
        ByteBuffer req = bytes(REQUEST, 1);
        long id = p.a.startRequest(p.now, p.addrB, req);
        p.exchange(); // whole request at B, B processing; A knows B's cutoffs and waits
        assertEquals(1, p.eventsB.size());
        long sentBefore = p.a.counter(Counter.PACKETS_SENT_DATA);

        byte[] evil = forged(type, id ^ 1, id); // the server side's id, as B would send it
        p.a.onDatagram(p.now, EVIL, ByteBuffer.wrap(evil));
        p.collect();
        assertTrue(p.eventsA.isEmpty(), "no RESPONSE or FAILED from a forged packet: " + p.eventsA);
        if (namesAnRpc(type)) {
            assertEquals(1, p.a.drops(DropReason.WRONG_PEER), type + " from another address is WRONG_PEER");
        }
        assertToldNothingNew(p, p.a, Set.of(id));
        assertEquals(sentBefore, p.a.counter(Counter.PACKETS_SENT_DATA), "no data sent or resent because of it");
        assertEquals(0, p.a.counter(Counter.REQUEST_RESTARTS));
        assertEquals(0, p.a.bufferedBytes());

        if (type == PacketType.CUTOFFS) {
            // EVIL's cutoffs (all 0) would send a 100-byte message at level 4; B's say level 7.
            p.a.startRequest(p.now, p.addrB, bytes(100, 2));
            List<EnginePair.Packet> next = p.drain(p.a);
            assertEquals(7, next.get(0).priority(), "B's cutoffs still rule A's messages to B");
            next.forEach(p::deliver);
        }
        ByteBuffer resp = bytes(5_000, 3);
        for (EngineEvent r : p.eventsB) {
            assertTrue(p.b.respond(p.now, r.peer(), r.rpcId(), r.rpcId() == id ? resp : bytes(1, 0)));
        }
        p.exchange();
        EngineEvent got = p.eventsA.stream().filter(e -> e.rpcId() == id).findFirst().orElseThrow();
        assertEquals(EngineEvent.Kind.RESPONSE, got.kind());
        assertArrayEquals(resp.array(), got.message().toByteArray(), "the real response, not the forged one");
        assertEquals(1, p.eventsA.stream().filter(e -> e.rpcId() == id).count());
        p.advance(CFG.tombstoneTicks * TICK + 5 * TICK);
        assertTrue(p.a.isQuiescent(), p.a.describe());
    }

    // ------------------------------------------------------------ a server RPC (on B, of A)

    @ParameterizedTest
    @EnumSource(PacketType.class)
    void serverRpc_packetFromThirdAddressNamingIt_hasNoEffect(PacketType type) {
        EnginePair p = new EnginePair(CFG);
        ByteBuffer req = bytes(REQUEST, 4);
        long id = p.a.startRequest(p.now, p.addrB, req);
        p.drain(p.a).forEach(p::deliver); // the unscheduled part only: B is receiving
        assertEquals(1, p.b.liveServerRpcs());
        Set<Long> named = new HashSet<>(Set.of(id));

        // 1. While B receives the request: as the client would name it, and as the server.
        for (long forgedId : new long[]{id, id ^ 1}) {
            p.b.onDatagram(p.now, EVIL, ByteBuffer.wrap(forged(type, forgedId, id)));
            p.collect();
            assertToldNothingNew(p, p.b, named);
        }
        assertTrue(p.b.liveServerRpcs() >= 1);
        for (EngineEvent e : p.eventsB) {
            // A forged whole request is EVIL's own RPC (EVIL, id), apart from A's: answer it.
            assertEquals(EVIL, e.peer());
            assertTrue(p.b.respond(p.now, e.peer(), e.rpcId(), bytes(1, 0)));
        }
        p.exchange();
        assertEquals(1, p.eventsB.stream().filter(e -> e.peer().equals(p.addrA)).count(), "A's request delivered once");
        assertTrue(p.eventsB.stream().allMatch(e -> e.peer().equals(p.addrA) || type == PacketType.DATA));
        EngineEvent r = p.eventsB.stream().filter(e -> e.peer().equals(p.addrA)).findFirst().orElseThrow();
        assertEquals(id, r.rpcId());
        assertArrayEquals(req.array(), r.message().toByteArray(), "A's request intact");

        // 2. B has sent its whole response and waits for A's ACK (held back for now).
        ByteBuffer resp = bytes(3_000, 5);
        assertTrue(p.b.respond(p.now, p.addrA, id, resp));
        p.exchange();
        assertEquals(EngineEvent.Kind.RESPONSE, p.eventsA.get(0).kind());
        int serverRpcs = p.b.liveServerRpcs();
        for (long forgedId : new long[]{id, id ^ 1}) {
            p.b.onDatagram(p.now, EVIL, ByteBuffer.wrap(forged(type, forgedId, id)));
            p.collect();
            assertToldNothingNew(p, p.b, named);
        }
        assertEquals(serverRpcs, p.b.liveServerRpcs(), "A's finished RPC is still kept for A's ACK");
        assertEquals(0, p.b.counter(Counter.SERVER_RPCS_COMPLETED), "EVIL's ACK freed nothing");
        assertEquals(0, p.b.counter(Counter.SERVER_RPCS_ABANDONED), "EVIL's RPC_UNKNOWN freed nothing");
        if (type == PacketType.RESEND) {
            assertEquals(0, p.b.counter(Counter.PACKETS_RETRANSMITTED), "nothing resent to anyone");
        }

        // 3. A's real ACK frees it; EVIL's own state (if a forged DATA made any) times out.
        p.advance(2 * TICK);
        assertEquals(1, p.b.counter(Counter.SERVER_RPCS_COMPLETED));
        assertEquals(1, p.eventsA.size());
        assertArrayEquals(resp.array(), p.eventsA.get(0).message().toByteArray());
        // (A server RPC of EVIL's that timed out unacknowledged leaves a tombstone for timeoutTicks.)
        p.advance((2L * CFG.timeoutTicks + CFG.tombstoneTicks + 5) * TICK);
        assertTrue(p.b.isQuiescent(), p.b.describe());
        assertEquals(0, p.a.counter(Counter.REQUEST_RESTARTS));
    }

    @Test
    void ackFromThirdAddress_namingManyHonestIds_freesNothing() {
        EnginePair p = new EnginePair(CFG);
        // Four: a fifth completion would fill A's ack batch and send it at once.
        long[] ids = new long[4];
        for (int i = 0; i < 4; i++) {
            ids[i] = p.a.startRequest(p.now, p.addrB, bytes(10, i));
        }
        p.exchange();
        p.serveFromB(new byte[7]);
        p.exchange();
        assertEquals(4, p.b.liveServerRpcs());
        ByteBuffer ack = ByteBuffer.allocate(100);
        PacketEncoder.ack(ack, ids[0], ids, new int[4], 4);
        ack.flip();
        p.b.onDatagram(p.now, EVIL, ack);
        assertEquals(4, p.b.liveServerRpcs(), "an ACK frees only the sender's own RPCs");
        p.advance((CFG.ackDelayTicks + 1) * TICK);
        assertEquals(0, p.b.liveServerRpcs(), "A's own ACKs free them");
    }

    // ------------------------------------------------------------ ids

    @Test
    void ids_differBetweenEnginesAndSpreadOverThe64BitSpace() {
        // With a secure random seed per engine (as homa-netty passes), the first id is one of
        // 2^63 even values: an off-path peer cannot guess it. Here: seeds 0..999 give 1000 distinct
        // first ids whose high bits are spread, not clustered near a fixed start.
        Set<Long> firsts = new HashSet<>();
        int highBitSet = 0;
        for (long seed = 0; seed < 1000; seed++) {
            long id = new HomaEngine(CFG, seed).startRequest(0, EVIL, bytes(1, 0));
            assertEquals(0, id & 1);
            firsts.add(id);
            if (id < 0) {
                highBitSet++;
            }
        }
        assertEquals(1000, firsts.size());
        assertTrue(highBitSet > 400 && highBitSet < 600, "top bit set in " + highBitSet + " of 1000");
    }

    @Test
    void ids_sameSeedSameIds_forReplayableSimulations() {
        HomaEngine x = new HomaEngine(CFG, 42);
        HomaEngine y = new HomaEngine(CFG, 42);
        for (int i = 0; i < 10; i++) {
            assertEquals(x.startRequest(0, EVIL, bytes(1, 0)), y.startRequest(0, EVIL, bytes(1, 0)));
        }
    }

    @Test
    void guessedIds_fromOffPathAddress_neverHitALiveRpc() {
        // An off-path sender that does not know the seed tries 100,000 guesses near small ids and at
        // random: none names a live RPC of ours, so each is counted UNKNOWN_RPC and nothing else.
        HomaEngine e = new HomaEngine(CFG, 0x5EED_5EEDL);
        InetSocketAddress server = new InetSocketAddress("127.0.0.1", 7000);
        for (int i = 0; i < 100; i++) {
            e.startRequest(0, server, bytes(10, i));
        }
        java.util.SplittableRandom guess = new java.util.SplittableRandom(1);
        DecodedPacket d = new DecodedPacket();
        for (int i = 0; i < 100_000; i++) {
            long id = (i < 50_000 ? 2L * i + 3 : guess.nextLong() | 1);
            byte[] pkt = forged(PacketType.RPC_UNKNOWN, id, 0);
            assertNull(PacketDecoder.decode(ByteBuffer.wrap(pkt), CFG.maxMessageLength, d));
            e.onDatagram(0, server, ByteBuffer.wrap(pkt)); // even from the right address
        }
        assertEquals(100_000, e.drops(DropReason.UNKNOWN_RPC));
        assertEquals(0, e.counter(Counter.REQUEST_RESTARTS));
        assertEquals(100, e.liveClientRpcs());
        assertNull(e.pollEvent(), "a guessed RPC_UNKNOWN completed or failed one of our RPCs");
    }
}
