package io.homa.core.sim;

import io.homa.core.EngineConfig;
import io.homa.core.EngineEvent;
import io.homa.core.RpcError;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A server that gave up a responded RPC (its client fell silent past the timeout, here a client
 * starved of the response's missing packets behind shorter messages, under 2% loss and
 * reordering) must not run the request again when that client asks for the rest: it answers the
 * RESEND with RPC_UNKNOWN (the id is tombstoned), and the client fails the call as
 * OUTCOME_UNKNOWN rather than send the request again. Before the fix the server answered
 * RPC_UNKNOWN_SINCE with its long uptime, which a client takes as "never ran": the request ran
 * twice (found by SecuredSimulationTest's rotation workload on plain hosts, seeds 33, 35, 36).
 */
class AbandonedResponseScenarioTest {
    @Test
    void aRequestNeverRunsTwice_aCallWhoseServerGaveUpFailsAsOutcomeUnknown() {
        Seeds.run(33L, seed -> {
            SimNetwork net = LossRecoveryScenarioTest.faultyNetwork(seed, 0.02, 0.0, 0.02);
            SimHost a = net.addHost(EngineConfig.defaults());
            SimHost b = net.addHost(EngineConfig.defaults());
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
            }
            assertTrue(net.runUntilIdle(600_000_000_000L));
            int unknown = 0;
            for (RpcLedger.Call c : ledger.calls()) {
                assertTrue(ledger.deliveries(c) <= 1, "request of rpc " + c.id + " ran " + ledger.deliveries(c) + " times");
                if (c.outcome.kind() == EngineEvent.Kind.FAILED) {
                    assertEquals(RpcError.OUTCOME_UNKNOWN, c.outcome.error(), c.outcome.toString());
                    assertEquals(1, ledger.deliveries(c), "an OUTCOME_UNKNOWN call whose request never ran");
                    unknown++;
                }
            }
            if (seed == 33L) { // the seed that ran requests twice before the fix: the case is exercised
                assertTrue(unknown > 0, "no server gave up a responded RPC in this run");
            }
            ledger.releaseOutcomes();
        });
    }
}
