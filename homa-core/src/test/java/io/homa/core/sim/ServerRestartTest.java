package io.homa.core.sim;

import io.homa.core.Counter;
import io.homa.core.EngineConfig;
import io.homa.core.EngineEvent;
import io.homa.core.wire.DecodedPacket;
import io.homa.core.wire.PacketDecoder;
import io.homa.core.wire.PacketType;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a client sees when the server process restarts (loses all its RPC state) at each point of
 * an RPC, as docs/protocol.md ("Server restarts") describes: the new server answers the client's
 * RESEND with RPC_UNKNOWN_SINCE and its age, younger than the request. A request the old server
 * never had whole is sent again from offset 0 with the same id and runs once, in the new server.
 * One the old server may have run fails with OUTCOME_UNKNOWN and is not sent again, unless it is
 * idempotent: then it is sent again and runs again (at-least-once, as the caller allowed).
 */
class ServerRestartTest {
    private static final EngineConfig CFG = EngineConfig.builder().linkMbps(10_000).build();
    private static final long LIMIT = 10_000_000_000L;

    /** Every packet on the wire, decoded, with its source. */
    private record Seen(boolean fromClient, DecodedPacket p) {
    }

    private static List<Seen> watch(SimNetwork net, SimHost client, Runnable[] onPacket) {
        List<Seen> seen = new ArrayList<>();
        net.intercept(pk -> {
            DecodedPacket d = new DecodedPacket();
            if (PacketDecoder.decode(ByteBuffer.wrap(pk.bytes()), CFG.maxMessageLength, d) == null) {
                seen.add(new Seen(pk.source().equals(client.address()), d));
            }
            if (onPacket[0] != null) {
                onPacket[0].run();
            }
            return true;
        });
        return seen;
    }

    private static byte[] random(long seed, int n) {
        byte[] b = new byte[n];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    /** After the restart the server said RPC_UNKNOWN and the client's request began again at offset 0. */
    private static void assertRestartedFromZero(List<Seen> seen, int restartAt, long id) {
        boolean unknown = false;
        boolean fromZero = false;
        for (int i = restartAt; i < seen.size(); i++) {
            DecodedPacket d = seen.get(i).p();
            if (!seen.get(i).fromClient() && d.type == PacketType.RPC_UNKNOWN_SINCE && d.senderId == (id ^ 1)) {
                unknown = true;
            }
            if (unknown && seen.get(i).fromClient() && d.type == PacketType.DATA && d.senderId == id && d.offset == 0) {
                fromZero = true;
            }
        }
        assertTrue(unknown, "the new server answered RPC_UNKNOWN_SINCE");
        assertTrue(fromZero, "then the client sent its request from offset 0");
    }

    @Test
    void restartWhileReceivingRequest_requestSentAgainFromZero_runsOnce() {
        Seeds.run(71L, seed -> {
            SimNetwork net = new SimNetwork(seed);
            SimHost a = net.addHost(CFG);
            SimHost b = net.addHost(CFG);
            RpcLedger ledger = new RpcLedger(net);
            ledger.attach(a);
            ledger.attach(b);
            Runnable[] hook = {null};
            List<Seen> seen = watch(net, a, hook);
            int[] restartAt = {-1};
            hook[0] = () -> {
                long fromA = seen.stream().filter(s -> s.fromClient() && s.p().type == PacketType.DATA).count();
                if (restartAt[0] < 0 && fromA == 60) { // part of the 300 KB request has arrived
                    restartAt[0] = seen.size();
                    b.restart();
                    ledger.attach(b);
                }
            };
            RpcLedger.Call c = ledger.call(a, b, random(seed, 300_000));
            assertTrue(net.runUntil(ledger::allFinished, LIMIT));
            ledger.assertAllExactlyOnce(); // the old server never got the whole request: it ran once
            assertRestartedFromZero(seen, restartAt[0], c.id);
            assertEquals(1, a.engine().counter(Counter.REQUEST_RESTARTS));
            assertTrue(net.runUntilIdle(LIMIT));
            RpcLedger.assertQuiescent(net);
        });
    }

    /** The old process takes the request, then crashes before answering; the new one echoes. */
    private static RpcLedger.Call crashAfterDelivery(boolean idempotent, List<EngineEvent> oldIncarnation,
                                                     List<Seen> seenOut, int[] restartAt, SimNetwork net, RpcLedger ledger,
                                                     SimHost a, SimHost b, byte[] request) {
        Runnable[] hook = {null};
        List<Seen> seen = watch(net, a, hook);
        b.onEvent(e -> {
            oldIncarnation.add(e);
            restartAt[0] = seen.size();
            b.restart();
            ledger.attach(b);
        });
        RpcLedger.Call c = ledger.call(a, b, request, idempotent);
        assertTrue(net.runUntil(ledger::allFinished, LIMIT));
        seenOut.addAll(seen);
        return c;
    }

    @Test
    void restartAfterRequestDelivered_outcomeUnknown_notRunAgain() {
        Seeds.run(72L, seed -> {
            SimNetwork net = new SimNetwork(seed);
            SimHost a = net.addHost(CFG);
            SimHost b = net.addHost(CFG);
            RpcLedger ledger = new RpcLedger(net);
            ledger.attach(a);
            List<EngineEvent> oldIncarnation = new ArrayList<>();
            List<Seen> seen = new ArrayList<>();
            int[] restartAt = {-1};
            RpcLedger.Call c = crashAfterDelivery(false, oldIncarnation, seen, restartAt, net, ledger, a, b,
                    random(seed, 5_000));
            assertEquals(1, oldIncarnation.size(), "the old process had the request");
            assertEquals(EngineEvent.Kind.FAILED, c.outcome.kind(), c.outcome::toString);
            assertEquals(io.homa.core.RpcError.OUTCOME_UNKNOWN, c.outcome.error());
            assertEquals(0, ledger.deliveries(c), "the new process never ran it: at most once");
            assertEquals(0, a.engine().counter(Counter.REQUEST_RESTARTS));
            assertEquals(1, a.engine().counter(Counter.OUTCOMES_UNKNOWN));
            assertTrue(seen.stream().skip(restartAt[0]).anyMatch(x -> !x.fromClient() && x.p().type == PacketType.RPC_UNKNOWN_SINCE));
            assertTrue(net.runUntilIdle(LIMIT));
            RpcLedger.assertQuiescent(net);
        });
    }

    @Test
    void restartAfterRequestDelivered_idempotent_runsAgainOnNewServer_atLeastOnce() {
        Seeds.run(75L, seed -> {
            SimNetwork net = new SimNetwork(seed);
            SimHost a = net.addHost(CFG);
            SimHost b = net.addHost(CFG);
            RpcLedger ledger = new RpcLedger(net);
            ledger.attach(a);
            List<EngineEvent> oldIncarnation = new ArrayList<>();
            List<Seen> seen = new ArrayList<>();
            int[] restartAt = {-1};
            byte[] request = random(seed, 5_000);
            RpcLedger.Call c = crashAfterDelivery(true, oldIncarnation, seen, restartAt, net, ledger, a, b, request);
            assertEquals(1, oldIncarnation.size());
            assertArrayEquals(request, oldIncarnation.get(0).message().toByteArray());
            assertEquals(1, ledger.deliveries(c), "and the new process ran it again: twice in all");
            assertEquals(EngineEvent.Kind.RESPONSE, c.outcome.kind());
            assertArrayEquals(request, c.outcome.message().toByteArray());
            assertRestartedFromZero(seen, restartAt[0], c.id);
            assertTrue(net.runUntilIdle(LIMIT));
            RpcLedger.assertQuiescent(net);
        });
    }

    /** The server restarts after 100 DATA packets of a 400 KB response. */
    private static void restartMidResponse(long seed, boolean idempotent) {
        SimNetwork net = new SimNetwork(seed);
        SimHost a = net.addHost(CFG);
        SimHost b = net.addHost(CFG);
        RpcLedger ledger = new RpcLedger(net).responseLength(len -> 400_000);
        ledger.attach(a);
        ledger.attach(b);
        Runnable[] hook = {null};
        List<Seen> seen = watch(net, a, hook);
        int[] restartAt = {-1};
        hook[0] = () -> {
            long fromB = seen.stream().filter(s -> !s.fromClient() && s.p().type == PacketType.DATA).count();
            if (restartAt[0] < 0 && fromB == 100) {
                restartAt[0] = seen.size();
                b.restart();
                ledger.attach(b);
            }
        };
        RpcLedger.Call c = ledger.call(a, b, random(seed, 100), idempotent);
        assertTrue(net.runUntil(ledger::allFinished, LIMIT));
        if (idempotent) {
            assertEquals(EngineEvent.Kind.RESPONSE, c.outcome.kind(), c.outcome::toString);
            assertEquals(400_000, c.outcome.message().length());
            assertEquals(2, ledger.deliveries(c), "the old process ran the request, then the new one: at-least-once");
            assertEquals(1, a.engine().counter(Counter.REQUEST_RESTARTS));
            assertRestartedFromZero(seen, restartAt[0], c.id);
        } else {
            assertEquals(EngineEvent.Kind.FAILED, c.outcome.kind(), c.outcome::toString);
            assertEquals(io.homa.core.RpcError.OUTCOME_UNKNOWN, c.outcome.error());
            assertEquals(1, ledger.deliveries(c), "run by the old process only");
            assertEquals(0, a.engine().counter(Counter.REQUEST_RESTARTS));
        }
        assertEquals(0, a.engine().bufferedBytes(), "the partial response was freed");
        assertTrue(net.runUntilIdle(LIMIT));
        RpcLedger.assertQuiescent(net);
    }

    @Test
    void restartMidResponse_partialResponseDropped_outcomeUnknown() {
        Seeds.run(73L, seed -> restartMidResponse(seed, false));
    }

    @Test
    void restartMidResponse_idempotent_requestRunsAgain_wholeNewResponse() {
        Seeds.run(76L, seed -> restartMidResponse(seed, true));
    }

    @Test
    void restartAfterResponseComplete_clientUnaffected() {
        Seeds.run(74L, seed -> {
            SimNetwork net = new SimNetwork(seed);
            SimHost a = net.addHost(CFG);
            SimHost b = net.addHost(CFG);
            RpcLedger ledger = new RpcLedger(net);
            ledger.attach(a);
            ledger.attach(b);
            RpcLedger.Call c = ledger.call(a, b, random(seed, 2_000));
            assertTrue(net.runUntil(ledger::allFinished, LIMIT));
            b.restart(); // before the client's ACK has arrived: the new process knows nothing of it
            ledger.attach(b);
            assertTrue(net.runUntilIdle(LIMIT));
            ledger.assertAllExactlyOnce();
            assertEquals(0, a.engine().counter(Counter.REQUEST_RESTARTS));
            assertEquals(EngineEvent.Kind.RESPONSE, c.outcome.kind());
            RpcLedger.assertQuiescent(net);
        });
    }
}
