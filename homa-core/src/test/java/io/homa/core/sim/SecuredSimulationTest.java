package io.homa.core.sim;

import io.homa.core.EngineConfig;
import io.homa.core.EngineEvent;
import io.homa.core.psp.PspDrop;
import io.homa.core.psp.PspFormat;
import io.homa.core.psp.PspMasterKeys;
import io.homa.core.wire.DropReason;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The security layer on the simulated network, deterministic (seeded keys, SPIs, IVs, workloads
 * and faults): secured hosts deliver exactly once through loss, duplication and reordering; an
 * outsider's forged, tampered, plaintext and replayed datagrams are dropped and counted without a
 * handler run or a packet sent in answer; a plain and a secured host refuse each other; keys rotate
 * under load without a failed or repeated call.
 */
class SecuredSimulationTest {
    private static final long SECOND = 1_000_000_000L;
    /** Sealed datagrams are 32 bytes longer: the engine's segments shrink so that they fit the MTU. */
    private static final EngineConfig SECURED = EngineConfig.builder()
            .ipUdpOverhead(28 + PspFormat.OVERHEAD).build();

    private static byte[] key(long seed) {
        byte[] k = new byte[32];
        new SplittableRandom(seed).nextBytes(k);
        return k;
    }

    private static SimHost securedHost(SimNetwork net, PspMasterKeys keys, long seed) {
        SimHost h = net.addHost(SECURED);
        h.secure(keys, seed);
        return h;
    }

    private static long sent(SimHost h) {
        return h.engine().counter(io.homa.core.Counter.BYTES_SENT);
    }

    @Test
    void securedHostsDeliverExactlyOnceThroughFaults() {
        Seeds.run(30L, seed -> {
            SimNetwork net = LossRecoveryScenarioTest.faultyNetwork(seed, 0.05, 0.02, 0.05);
            List<SimHost> hosts = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                hosts.add(securedHost(net, new PspMasterKeys(0, key(1)), seed * 31 + i));
            }
            RpcLedger ledger = new RpcLedger(net);
            hosts.forEach(ledger::attach);
            SplittableRandom r = new SplittableRandom(seed);
            Workload w = Workload.named("w3");
            for (int i = 0; i < 300; i++) {
                SimHost client = hosts.get(r.nextInt(3));
                SimHost server = hosts.get((hosts.indexOf(client) + 1 + r.nextInt(2)) % 3);
                byte[] request = new byte[w.sample(r)];
                r.nextBytes(request);
                ledger.call(client, server, request);
                net.runFor(20_000);
            }
            assertTrue(net.runUntilIdle(600 * SECOND));
            ledger.assertAllExactlyOnce();
            // Duplicates the network made are refused by the replay window before the engine sees them.
            long replays = hosts.stream().mapToLong(h -> h.securityDrops(PspDrop.REPLAY)).sum();
            assertTrue(net.packetsDuplicated() == 0 || replays > 0, "duplicates " + net.packetsDuplicated());
            for (SimHost h : hosts) {
                assertEquals(0, h.securityDrops(PspDrop.AUTH_FAILED));
                assertEquals(0, h.engine().drops(DropReason.SEALED));
            }
            ledger.releaseOutcomes();
        });
    }

    @Test
    void anOutsidersDatagramsAreRefusedCountedAndUnanswered() {
        Seeds.run(31L, seed -> {
            SimNetwork net = new SimNetwork(seed);
            PspMasterKeys keys = new PspMasterKeys(0, key(2));
            SimHost server = securedHost(net, keys, seed);
            SimHost client = securedHost(net, new PspMasterKeys(0, key(2)), seed + 1);
            List<byte[]> wire = new ArrayList<>();
            net.intercept(p -> {
                if (p.destination.equals(server.address())) {
                    wire.add(p.bytes.clone());
                }
                return true;
            });
            RpcLedger ledger = new RpcLedger(net);
            ledger.attach(server);
            ledger.attach(client);
            for (int i = 0; i < 20; i++) {
                ledger.call(client, server, new byte[100 + 700 * i]);
            }
            assertTrue(net.runUntilIdle(60 * SECOND));
            ledger.assertAllExactlyOnce();
            net.intercept(p -> true);
            long handled = ledger.calls().size();
            long sentBefore = sent(server);
            java.net.InetSocketAddress outsider = new java.net.InetSocketAddress("10.9.9.9", 4000);
            SplittableRandom r = new SplittableRandom(seed);
            int tampered = 0;
            for (byte[] d : wire) { // replays of every datagram the client sent, from the client's address
                net.inject(client.address(), server.address(), d, 0);
                byte[] t = d.clone();
                int at = r.nextInt(t.length);
                t[at] ^= (byte) (1 << r.nextInt(8));
                net.inject(outsider, server.address(), t, 0);
                tampered++;
            }
            // Plaintext Homa from the outsider: a request the server would answer if it were plain.
            SimNetwork plainNet = new SimNetwork(seed);
            SimHost plainClient = plainNet.addHost(EngineConfig.defaults());
            SimHost plainServer = plainNet.addHost(EngineConfig.defaults());
            List<byte[]> plain = new ArrayList<>();
            plainNet.intercept(p -> {
                plain.add(p.bytes.clone());
                return true;
            });
            plainClient.call(plainServer.address(), new byte[300]);
            plainNet.runFor(SECOND / 1000);
            for (byte[] d : plain) {
                net.inject(outsider, server.address(), d, 0);
            }
            assertTrue(net.runUntilIdle(60 * SECOND));
            // A tampered copy keeps its IV unless the changed bit is in it: most are refused as
            // replays before their tag is even checked, the others for the tag (or the header).
            long refused = 0;
            for (PspDrop d : PspDrop.values()) {
                refused += server.securityDrops(d);
            }
            assertEquals(wire.size() + tampered + plain.size(), refused, "every injected datagram refused");
            assertTrue(server.securityDrops(PspDrop.REPLAY) >= wire.size(), "every replay refused");
            assertEquals(plain.size(), server.securityDrops(PspDrop.NOT_SEALED));
            assertEquals(handled, ledger.calls().size());
            for (RpcLedger.Call c : ledger.calls()) {
                assertEquals(1, ledger.deliveries(c), "a replayed request ran again");
            }
            assertEquals(sentBefore, sent(server), "the server answered an unauthenticated datagram");
            ledger.releaseOutcomes();
        });
    }

    @Test
    void plainAndSecuredHostsRefuseEachOther() {
        Seeds.run(32L, seed -> {
            SimNetwork net = new SimNetwork(seed);
            SimHost secured = securedHost(net, new PspMasterKeys(1, key(3)), seed);
            SimHost plain = net.addHost(EngineConfig.defaults());
            List<EngineEvent> outcomes = new ArrayList<>();
            plain.onEvent(outcomes::add);
            secured.onEvent(outcomes::add);
            plain.call(secured.address(), new byte[1000]);
            secured.call(plain.address(), new byte[1000]);
            assertTrue(net.runUntilIdle(600 * SECOND));
            assertTrue(secured.securityDrops(PspDrop.NOT_SEALED) > 0);
            assertTrue(plain.engine().drops(DropReason.SEALED) > 0);
            assertTrue(outcomes.stream().noneMatch(e -> e.kind() == EngineEvent.Kind.REQUEST), outcomes.toString());
            assertEquals(2, outcomes.stream().filter(e -> e.kind() == EngineEvent.Kind.FAILED).count(), outcomes.toString());
        });
    }

    @Test
    void keysRotateUnderLoadWithoutAFailedOrRepeatedCall() {
        rotation();
    }

    /** The socket's defaults (HomaConfig's timeout and restarts), with the 32 bytes of PSP. */
    private static final EngineConfig SOCKET_LIKE = SECURED.toBuilder().timeoutTicks(1000).maxRestarts(100).build();

    private void rotation() {
        Seeds.run(33L, seed -> {
            SimNetwork net = LossRecoveryScenarioTest.faultyNetwork(seed, 0.02, 0.0, 0.02);
            PspMasterKeys aKeys = new PspMasterKeys(0, key(4));
            PspMasterKeys bKeys = new PspMasterKeys(0, key(4));
            SimHost a = net.addHost(SOCKET_LIKE);
            SimHost b = net.addHost(SOCKET_LIKE);
            a.secure(aKeys, seed);
            b.secure(bKeys, seed + 1);
            RpcLedger ledger = new RpcLedger(net);
            ledger.attach(a);
            ledger.attach(b);
            SplittableRandom r = new SplittableRandom(seed);
            Workload w = Workload.named("w4");
            for (int i = 0; i < 400; i++) {
                byte[] req = new byte[Math.min(w.sample(r), 200_000)];
                r.nextBytes(req);
                ledger.call(i % 2 == 0 ? a : b, i % 2 == 0 ? b : a, req);
                net.runFor(50_000);
                switch (i) {
                    case 100 -> {
                        aKeys.install(1, key(5));
                        bKeys.install(1, key(5));
                    }
                    case 150 -> aKeys.sendWith(1);
                    case 200 -> bKeys.sendWith(1);
                    case 300 -> {
                        aKeys.remove(0);
                        bKeys.remove(0);
                    }
                    default -> { }
                }
            }
            assertTrue(net.runUntilIdle(600 * SECOND));
            ledger.assertAllExactlyOnce();
            assertEquals(0, a.securityDrops(PspDrop.AUTH_FAILED) + b.securityDrops(PspDrop.AUTH_FAILED));
            ledger.releaseOutcomes();
        });
    }
}
