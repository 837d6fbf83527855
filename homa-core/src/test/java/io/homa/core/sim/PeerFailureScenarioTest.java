package io.homa.core.sim;

import io.homa.core.Counter;
import io.homa.core.EngineConfig;
import io.homa.core.EngineEvent;
import io.homa.core.RpcError;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Peers that vanish, restart, or think for a long time. */
class PeerFailureScenarioTest {
    private static final EngineConfig CFG = EngineConfig.builder().linkMbps(10_000).build();
    private static final long TIMEOUT = CFG.timeoutTicks * CFG.tickNanos;

    private static void assertTimedOutInTime(RpcLedger.Call c) {
        assertNotNull(c.outcome, "the call ended");
        assertEquals(EngineEvent.Kind.FAILED, c.outcome.kind(), c.outcome.toString());
        assertEquals(RpcError.TIMEOUT, c.outcome.error());
        assertTrue(c.rttNanos() >= TIMEOUT, "not before the timeout: " + c.rttNanos());
        assertTrue(c.rttNanos() <= TIMEOUT + 3 * CFG.tickNanos, "within the timeout: " + c.rttNanos());
    }

    @Test
    void serverGoneBeforeRequest_callTimesOutWithinConfiguredTime() {
        Seeds.run(1L, seed -> {
            SimNetwork net = new SimNetwork(seed);
            SimHost a = net.addHost(CFG);
            SimHost b = net.addHost(CFG);
            RpcLedger ledger = new RpcLedger(net);
            ledger.attach(a);
            b.disconnect();
            List<RpcLedger.Call> calls = new ArrayList<>();
            for (int size : new int[]{0, 100, 5_000, 200_000}) {
                calls.add(ledger.call(a, b, new byte[size]));
            }
            assertTrue(net.runUntilIdle(10 * TIMEOUT));
            calls.forEach(PeerFailureScenarioTest::assertTimedOutInTime);
            assertEquals(4, a.engine().counter(Counter.TIMEOUTS));
            assertTrue(a.engine().isQuiescent(), a.engine().describe());
        });
    }

    @Test
    void serverDiesWhileProcessing_callTimesOut() {
        Seeds.run(2L, seed -> {
            SimNetwork net = new SimNetwork(seed);
            SimHost a = net.addHost(CFG);
            SimHost b = net.addHost(CFG);
            RpcLedger ledger = new RpcLedger(net);
            ledger.attach(a);
            b.onEvent(e -> b.disconnect()); // takes the request, then the machine dies
            RpcLedger.Call c = ledger.call(a, b, new byte[1000]);
            assertTrue(net.runUntilIdle(10 * TIMEOUT));
            assertTimedOutInTime(c);
            assertTrue(a.engine().isQuiescent());
        });
    }

    @Test
    void serverDiesMidResponse_callTimesOut() {
        Seeds.run(3L, seed -> {
            SimNetwork net = new SimNetwork(seed);
            SimHost a = net.addHost(CFG);
            SimHost b = net.addHost(CFG);
            RpcLedger ledger = new RpcLedger(net).responseLength(len -> 2_000_000);
            ledger.attach(a);
            ledger.attach(b);
            int[] seen = {0};
            net.intercept(p -> {
                if (p.source().equals(b.address()) && p.isData() && ++seen[0] == 50) {
                    b.disconnect();
                }
                return true;
            });
            RpcLedger.Call c = ledger.call(a, b, new byte[10]);
            assertTrue(net.runUntilIdle(10 * TIMEOUT));
            assertNotNull(c.outcome);
            assertEquals(RpcError.TIMEOUT, c.outcome.error());
            assertTrue(a.engine().isQuiescent(), a.engine().describe());
            assertEquals(0, a.engine().bufferedBytes(), "the partial response was freed");
        });
    }

    @Test
    void clientVanishes_serverStateFreedAfterTimeout() {
        Seeds.run(4L, seed -> {
            SimNetwork net = new SimNetwork(seed);
            SimHost a = net.addHost(CFG);
            SimHost b = net.addHost(CFG);
            RpcLedger ledger = new RpcLedger(net).responseLength(len -> 500_000);
            ledger.attach(a);
            ledger.attach(b);
            ledger.call(a, b, new byte[100]);
            net.intercept(p -> {
                if (p.source().equals(b.address()) && p.isData()) {
                    a.disconnect(); // the client dies as its response starts
                }
                return true;
            });
            assertTrue(net.runUntilIdle(10 * TIMEOUT));
            assertEquals(1, b.engine().counter(Counter.SERVER_RPCS_TIMED_OUT));
            assertTrue(b.engine().isQuiescent(), b.engine().describe());
        });
    }

    @Test
    void serverRestartsMidRpc_idempotentRequestSentAgain_deliveredOnceByNewServer() {
        Seeds.run(5L, seed -> {
            SimNetwork net = new SimNetwork(seed);
            SimHost a = net.addHost(CFG);
            SimHost b = net.addHost(CFG);
            RpcLedger ledger = new RpcLedger(net);
            ledger.attach(a);
            // The first incarnation swallows the request and crashes; the second echoes.
            b.onEvent(e -> {
                b.restart();
                ledger.attach(b);
            });
            // Idempotent: the old incarnation may have run it, so only then is it sent again.
            RpcLedger.Call c = ledger.call(a, b, new byte[3000], true);
            assertTrue(net.runUntilIdle(10 * TIMEOUT));
            assertNotNull(c.outcome);
            assertEquals(EngineEvent.Kind.RESPONSE, c.outcome.kind(), c.outcome.toString());
            assertEquals(1, ledger.deliveries(c), "the new server saw the request once");
            assertTrue(a.engine().counter(Counter.REQUEST_RESTARTS) >= 1, "the client restarted its request");
            RpcLedger.assertQuiescent(net);
        });
    }

    @Test
    void slowServer_busyKeepsCallAliveBeyondTimeout() {
        Seeds.run(6L, seed -> {
            SimNetwork net = new SimNetwork(seed);
            SimHost a = net.addHost(CFG);
            SimHost b = net.addHost(CFG);
            RpcLedger ledger = new RpcLedger(net);
            ledger.attach(a);
            List<EngineEvent> held = new ArrayList<>();
            b.onEvent(held::add);
            RpcLedger.Call c = ledger.call(a, b, new byte[500]);
            net.runFor(5 * TIMEOUT);
            assertEquals(null, c.outcome, "still waiting after 5 timeouts: the server answers BUSY");
            assertTrue(b.engine().counter(Counter.PACKETS_SENT_BUSY) > 0);
            EngineEvent req = held.get(0);
            b.respond(req.peer(), req.rpcId(), new byte[]{1, 2, 3});
            assertTrue(net.runUntilIdle(10 * TIMEOUT));
            assertEquals(EngineEvent.Kind.RESPONSE, c.outcome.kind());
            RpcLedger.assertQuiescent(net);
        });
    }

    @Test
    void abortedCall_serverCleansUp_noEvent() {
        Seeds.run(7L, seed -> {
            SimNetwork net = new SimNetwork(seed);
            SimHost a = net.addHost(CFG);
            SimHost b = net.addHost(CFG);
            RpcLedger ledger = new RpcLedger(net).responseLength(len -> 300_000);
            ledger.attach(a);
            ledger.attach(b);
            RpcLedger.Call c = ledger.call(a, b, new byte[100]);
            net.runFor(30_000);
            assertTrue(a.abort(c.id));
            assertTrue(!a.abort(c.id), "a second abort finds nothing");
            assertTrue(net.runUntilIdle(10 * TIMEOUT));
            assertEquals(null, c.outcome, "an aborted call has no event");
            RpcLedger.assertQuiescent(net);
        });
    }

    /**
     * A thousand calls wait on a server that holds every request for five timeouts: the client
     * asks that peer for at most one RPC's RESEND per tick (not a thousand), nothing times out
     * because the peer keeps answering, and every call completes once the server replies.
     */
    @Test
    void manyCallsToSlowServer_resendsRationedPerPeer_noneTimesOut() {
        Seeds.run(9L, seed -> {
            SimNetwork net = new SimNetwork(seed);
            SimHost a = net.addHost(CFG);
            SimHost b = net.addHost(CFG);
            RpcLedger ledger = new RpcLedger(net);
            ledger.attach(a);
            List<EngineEvent> held = new ArrayList<>();
            b.onEvent(held::add);
            for (int i = 0; i < 1000; i++) {
                ledger.call(a, b, new byte[100 + i]);
            }
            long ticksBefore = a.engine().counter(Counter.TICKS);
            net.runFor(5 * TIMEOUT);
            long ticks = a.engine().counter(Counter.TICKS) - ticksBefore;
            assertEquals(1000, held.size());
            assertEquals(0, a.engine().counter(Counter.TIMEOUTS), "a peer that answers is alive");
            long resends = a.engine().counter(Counter.PACKETS_SENT_RESEND);
            assertTrue(resends > 0 && resends <= ticks, resends + " RESENDs in " + ticks + " ticks");
            for (EngineEvent e : held) {
                b.respond(e.peer(), e.rpcId(), e.message().toByteArray());
            }
            assertTrue(net.runUntilIdle(10 * TIMEOUT));
            assertEquals(1000, ledger.completed());
            RpcLedger.assertQuiescent(net);
        });
    }
}
