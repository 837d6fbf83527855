package io.homa.core.sim;

import io.homa.core.Counter;
import io.homa.core.EngineConfig;
import io.homa.core.EngineEvent;
import io.homa.core.EngineLimitException;
import io.homa.core.HomaEngine;
import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketEncoder;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One test per resource limit, in the simulated network with honest RPCs alongside a hostile peer
 * that claims huge messages, opens thousands of RPCs or never acknowledges: the limit is reached
 * and counted, memory never goes beyond it, and honest RPCs are served (exactly once, right bytes).
 * Each test prints its figures (the high-water mark against the limit) as a line starting
 * "[limits]".
 */
class ResourceLimitsTest {
    private static final InetSocketAddress EVIL = new InetSocketAddress("10.66.0.1", 4000);

    private static void figure(String what, long highWater, long limit) {
        System.out.println("[limits] " + what + ": high-water " + highWater + " B, limit " + limit + " B ("
                + (100 * highWater / limit) + "%)");
    }

    /** Injects from {@code from} every unscheduled segment of a request claiming {@code length}. */
    private static int sendUnscheduled(SimNetwork net, EngineConfig cfg, InetSocketAddress from, SimHost to,
                                       long id, int length) {
        int seg = cfg.segmentPayload();
        int end = Math.min(length, cfg.unscheduledLimit());
        int n = 0;
        for (int off = 0; off < Math.max(end, 1); off += Math.max(seg, 1)) {
            int k = Math.min(seg, end - off);
            ByteBuffer b = ByteBuffer.allocate(cfg.maxDatagram());
            PacketEncoder.data(b, id, length, end, off, 1, false, 0, 0, ByteBuffer.wrap(new byte[k]), 0, k);
            b.flip();
            byte[] bytes = new byte[b.remaining()];
            b.get(bytes);
            net.inject(from, to.address(), bytes, 4);
            n++;
            if (length == 0) {
                break;
            }
        }
        return n;
    }

    /** Injects from {@code from} only the first segment of a request claiming {@code length}. */
    private static void sendFirstSegment(SimNetwork net, EngineConfig cfg, InetSocketAddress from, SimHost to,
                                         long id, int length) {
        int k = Math.min(cfg.segmentPayload(), length);
        ByteBuffer b = ByteBuffer.allocate(cfg.maxDatagram());
        PacketEncoder.data(b, id, length, Math.min(length, cfg.unscheduledLimit()), 0, 1, false, 0, 0,
                ByteBuffer.wrap(new byte[k]), 0, k);
        b.flip();
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        net.inject(from, to.address(), bytes, 4);
    }

    private static byte[] random(SplittableRandom r, int n) {
        byte[] b = new byte[n];
        r.nextBytes(b);
        return b;
    }

    // ------------------------------------------------------------ maxBufferedBytesPerPeer

    @Test
    void perPeerBuffer_peerClaimingHugeMessages_cappedWhileHonestPeerIsServed() {
        Seeds.run(61L, seed -> {
            EngineConfig cfg = EngineConfig.builder().linkMbps(10_000)
                    .maxBufferedBytesPerPeer(1 << 20).maxBufferedBytes(8 << 20).build();
            SimNetwork net = new SimNetwork(seed);
            SimHost a = net.addHost(cfg);
            SimHost b = net.addHost(cfg);
            RpcLedger ledger = new RpcLedger(net).ignoreRequestsFrom(EVIL);
            ledger.attach(a);
            ledger.attach(b);
            SplittableRandom r = new SplittableRandom(seed);
            long peak = 0;
            for (int i = 0; i < 200; i++) {
                // 64 MiB claimed, the unscheduled 40 KB sent, the rest never: 200 of them.
                sendUnscheduled(net, cfg, EVIL, b, 2L * (i + 1), cfg.maxMessageLength);
                if (i % 20 == 0) {
                    ledger.call(a, b, random(r, i % 40 == 0 ? 500_000 : 3_000));
                    ledger.call(b, a, random(r, 30_000));
                }
                net.runFor(200_000);
                peak = Math.max(peak, b.engine().bufferedBytes(EVIL));
            }
            assertTrue(net.runUntil(ledger::allFinished, 10_000_000_000L), b.engine().describe());
            ledger.assertAllExactlyOnce();
            HomaEngine e = b.engine();
            assertTrue(e.drops(DropReason.PEER_BUFFER_LIMIT) > 0, "the per-peer limit was reached");
            assertTrue(peak > cfg.maxBufferedBytesPerPeer - 70_000, "the hostile peer got up to its limit: " + peak);
            assertTrue(e.peerBufferedBytesHighWater() <= cfg.maxBufferedBytesPerPeer,
                    "one peer's high-water " + e.peerBufferedBytesHighWater());
            assertTrue(e.bufferedBytesHighWater() <= cfg.maxBufferedBytes);
            assertEquals(0, e.drops(DropReason.BUFFER_LIMIT), "the engine limit was never touched");
            assertEquals(0, a.engine().counter(Counter.REQUEST_RESTARTS), "honest requests went through first time");
            figure("maxBufferedBytesPerPeer, a peer claiming 200 x 64 MiB", e.peerBufferedBytesHighWater(),
                    cfg.maxBufferedBytesPerPeer);
            assertTrue(net.runUntilIdle(10_000_000_000L));
            RpcLedger.assertQuiescent(net);
        });
    }

    // ------------------------------------------------------------ maxBufferedBytes

    @Test
    void engineBuffer_manyHostilePeers_cappedAtEngineLimit_honestNeverWrong_servedAfterwards() {
        Seeds.run(62L, seed -> {
            EngineConfig cfg = EngineConfig.builder().linkMbps(10_000)
                    .maxBufferedBytesPerPeer(1 << 20).maxBufferedBytes(4 << 20).build();
            SimNetwork net = new SimNetwork(seed);
            SimHost a = net.addHost(cfg);
            SimHost b = net.addHost(cfg);
            RpcLedger ledger = new RpcLedger(net);
            ledger.attach(a);
            ledger.attach(b);
            SplittableRandom r = new SplittableRandom(seed);
            List<RpcLedger.Call> during = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                for (int p = 0; p < 8; p++) { // 8 addresses, each under its own per-peer limit
                    InetSocketAddress evil = new InetSocketAddress("10.66.0." + (p + 1), 4000);
                    sendUnscheduled(net, cfg, evil, b, 2L * (i + 1), cfg.maxMessageLength);
                }
                if (i % 5 == 0) {
                    during.add(ledger.call(a, b, random(r, 2_000)));
                }
                net.runFor(300_000);
            }
            HomaEngine e = b.engine();
            assertTrue(e.drops(DropReason.BUFFER_LIMIT) > 0, "the engine limit was reached");
            assertTrue(e.bufferedBytesHighWater() <= cfg.maxBufferedBytes, "high-water " + e.bufferedBytesHighWater());
            assertTrue(e.bufferedBytesHighWater() > cfg.maxBufferedBytes - 70_000, "reached " + e.bufferedBytesHighWater());
            assertTrue(e.peerBufferedBytesHighWater() <= cfg.maxBufferedBytesPerPeer);
            figure("maxBufferedBytes, 8 peers claiming 20 x 64 MiB each", e.bufferedBytesHighWater(), cfg.maxBufferedBytes);
            // Calls made while B's memory was full may have been refused and retried: whatever their
            // outcome, never a wrong answer and never a request run twice.
            assertTrue(net.runUntil(ledger::allFinished, 10_000_000_000L));
            for (RpcLedger.Call c : during) {
                assertTrue(ledger.deliveries(c) <= 1, "request delivered " + ledger.deliveries(c) + " times");
                if (c.outcome.kind() == EngineEvent.Kind.RESPONSE) {
                    assertArrayEquals(c.request, c.outcome.message().toByteArray());
                    assertEquals(1, ledger.deliveries(c));
                }
            }
            // Once the hostile state has timed out, B serves everyone again. (A message that waits
            // for our grants does not time out, so the hostile messages go a few grants at a time.)
            assertTrue(net.runUntil(() -> e.bufferedBytes() == 0, 10_000_000_000L), e.describe());
            RpcLedger after = new RpcLedger(net);
            after.attach(a);
            after.attach(b);
            for (int i = 0; i < 10; i++) {
                after.call(a, b, random(r, 1_000 * i));
            }
            assertTrue(net.runUntil(after::allFinished, 10_000_000_000L));
            after.assertAllExactlyOnce();
            assertTrue(net.runUntilIdle(10_000_000_000L));
            RpcLedger.assertQuiescent(net);
        });
    }

    // ------------------------------------------------------------ maxServerRpcsPerPeer

    @Test
    void serverRpcsPerPeer_peerOpeningThousandsOfRpcsAndNeverAcking_cappedWhileHonestPeerIsServed() {
        Seeds.run(63L, seed -> {
            EngineConfig cfg = EngineConfig.builder().linkMbps(10_000).maxServerRpcsPerPeer(64).build();
            SimNetwork net = new SimNetwork(seed);
            SimHost a = net.addHost(cfg);
            SimHost b = net.addHost(cfg);
            RpcLedger ledger = new RpcLedger(net).ignoreRequestsFrom(EVIL);
            ledger.attach(a);
            ledger.attach(b);
            SplittableRandom r = new SplittableRandom(seed);
            int maxLive = 0;
            for (int i = 0; i < 5_000; i++) {
                // Whole empty requests (answered, never acknowledged) and barely started ones, alternately.
                sendFirstSegment(net, cfg, EVIL, b, 2L * (i + 1), i % 2 == 0 ? 0 : 5_000_000);
                if (i % 500 == 0) {
                    ledger.call(a, b, random(r, 20_000));
                }
                if (i % 10 == 0) {
                    net.runFor(20_000);
                    maxLive = Math.max(maxLive, b.engine().liveServerRpcs(EVIL));
                }
            }
            assertTrue(net.runUntil(ledger::allFinished, 10_000_000_000L));
            ledger.assertAllExactlyOnce();
            HomaEngine e = b.engine();
            assertEquals(64, maxLive, "the hostile peer held exactly its quota");
            assertTrue(e.drops(DropReason.PEER_RPC_LIMIT) > 4_000, "refused: " + e.drops(DropReason.PEER_RPC_LIMIT));
            assertEquals(0, e.drops(DropReason.RPC_LIMIT));
            assertEquals(0, a.engine().counter(Counter.REQUEST_RESTARTS));
            System.out.println("[limits] maxServerRpcsPerPeer: a peer opening 5,000 RPCs held at most " + maxLive
                    + " (limit " + cfg.maxServerRpcsPerPeer + "), refused " + e.drops(DropReason.PEER_RPC_LIMIT));
            assertTrue(net.runUntilIdle(10_000_000_000L));
            assertTrue(e.counter(Counter.SERVER_RPCS_TIMED_OUT) >= 64, "never-acknowledged RPCs timed out");
            RpcLedger.assertQuiescent(net);
        });
    }

    // ------------------------------------------------------------ maxRpcs

    @Test
    void maxRpcs_severalPeers_totalCapped_startRequestRefused_servedOnceStateTimesOut() {
        Seeds.run(64L, seed -> {
            EngineConfig cfg = EngineConfig.builder().linkMbps(10_000).maxServerRpcsPerPeer(40).maxRpcs(100).build();
            SimNetwork net = new SimNetwork(seed);
            SimHost a = net.addHost(cfg);
            SimHost b = net.addHost(cfg);
            for (int p = 0; p < 4; p++) {
                InetSocketAddress evil = new InetSocketAddress("10.66.0." + (p + 1), 4000);
                for (int i = 0; i < 40; i++) {
                    sendFirstSegment(net, cfg, evil, b, 2L * (i + 1), 5_000_000);
                }
            }
            net.runFor(2_000_000);
            HomaEngine e = b.engine();
            assertEquals(100, e.liveRpcs());
            assertEquals(60, e.drops(DropReason.RPC_LIMIT));
            EngineLimitException x = null;
            try {
                e.startRequest(net.now(), a.address(), ByteBuffer.wrap(new byte[10]));
            } catch (EngineLimitException refused) {
                x = refused;
            }
            assertNotNull(x, "startRequest refused at maxRpcs");
            assertEquals("maxRpcs", x.limit());
            assertEquals(1, e.counter(Counter.RPC_LIMIT_REFUSALS));
            System.out.println("[limits] maxRpcs: 4 peers opening 160 RPCs held " + e.liveRpcs() + " (limit "
                    + cfg.maxRpcs + ")");
            net.runFor((cfg.timeoutTicks + 5) * cfg.tickNanos);
            assertEquals(0, e.liveRpcs(), "the silent peers' RPCs timed out");
            RpcLedger ledger = new RpcLedger(net);
            ledger.attach(a);
            ledger.attach(b);
            for (int i = 0; i < 20; i++) {
                ledger.call(i % 2 == 0 ? a : b, i % 2 == 0 ? b : a, new byte[100 * i]);
            }
            assertTrue(net.runUntil(ledger::allFinished, 10_000_000_000L));
            ledger.assertAllExactlyOnce();
            assertTrue(net.runUntilIdle(10_000_000_000L));
            RpcLedger.assertQuiescent(net);
        });
    }

    // ------------------------------------------------------------ maxOutgoingBytes

    @Test
    void outgoingBytes_clientNeverAcknowledging_capped_respondRefused_retriedUntilServed() {
        Seeds.run(65L, seed -> {
            EngineConfig cfg = EngineConfig.builder().linkMbps(10_000)
                    .maxServerRpcsPerPeer(8).maxOutgoingBytes(200_000).build();
            SimNetwork net = new SimNetwork(seed);
            SimHost a = net.addHost(cfg);
            SimHost b = net.addHost(cfg);
            RpcLedger ledger = new RpcLedger(net);
            ledger.attach(a);
            // B's application echoes; a refused respond is kept and tried again every tick.
            ArrayDeque<EngineEvent> pending = new ArrayDeque<>();
            long[] refusals = {0};
            Runnable[] retry = new Runnable[1];
            retry[0] = () -> {
                for (int k = pending.size(); k > 0; k--) {
                    EngineEvent ev = pending.poll();
                    try {
                        b.engine().respond(net.now(), ev.peer(), ev.rpcId(), ByteBuffer.wrap(ev.message().toByteArray()));
                    } catch (EngineLimitException full) {
                        refusals[0]++;
                        pending.add(ev);
                    }
                }
                b.pump();
                if (!pending.isEmpty()) {
                    net.schedule(net.now() + cfg.tickNanos, retry[0]);
                }
            };
            java.util.Map<Long, Integer> fromA = new java.util.HashMap<>();
            b.onEvent(ev -> {
                if (ev.kind() == EngineEvent.Kind.REQUEST) {
                    if (ev.peer().equals(a.address())) {
                        fromA.merge(ev.rpcId(), 1, Integer::sum);
                    }
                    boolean wasEmpty = pending.isEmpty();
                    pending.add(ev);
                    if (wasEmpty) {
                        net.schedule(net.now(), retry[0]);
                    }
                }
            });
            SplittableRandom r = new SplittableRandom(seed);
            // EVIL sends whole 30,000-byte requests and never acknowledges the echoes: 8 of them
            // (its RPC quota) would pin 240,000 bytes, more than maxOutgoingBytes.
            for (int i = 0; i < 40; i++) {
                sendUnscheduled(net, cfg, EVIL, b, 2L * (i + 1), 30_000);
                if (i % 4 == 0) {
                    ledger.call(a, b, random(r, 20_000));
                }
                net.runFor(500_000);
            }
            assertTrue(net.runUntil(ledger::allFinished, 10_000_000_000L));
            for (RpcLedger.Call c : ledger.calls()) {
                assertEquals(EngineEvent.Kind.RESPONSE, c.outcome.kind(), c.outcome::toString);
                assertEquals(1, c.responses);
                assertArrayEquals(c.request, c.outcome.message().toByteArray());
                assertEquals(1, fromA.get(c.id), "request delivered once");
            }
            assertEquals(ledger.calls().size(), fromA.size());
            HomaEngine e = b.engine();
            assertTrue(refusals[0] > 0, "respond was refused while the outgoing bytes were at the limit");
            assertEquals(refusals[0], e.counter(Counter.OUTGOING_LIMIT_REFUSALS));
            assertTrue(e.outgoingBytesHighWater() <= cfg.maxOutgoingBytes, "high-water " + e.outgoingBytesHighWater());
            assertTrue(e.outgoingBytesHighWater() > cfg.maxOutgoingBytes - 30_000);
            figure("maxOutgoingBytes, a client never acknowledging 30 KB responses", e.outgoingBytesHighWater(),
                    cfg.maxOutgoingBytes);
            assertTrue(net.runUntilIdle(10_000_000_000L));
            assertEquals(0, e.outgoingBytes());
            assertTrue(e.isQuiescent(), e.describe());
        });
    }
}
