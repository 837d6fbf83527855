package io.homa.bench.sim;

import io.homa.core.EngineConfig;
import io.homa.core.sim.Workload;
import io.homa.core.sim.DatacenterTopology;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SimTunerTest {
    @Test
    void roundTripOfThePapersTopologyIsAboutItsRttBytes() {
        int rtt = SimTuner.rttBytes(DatacenterTopology.paper(), EngineConfig.defaults());
        // The paper: about 7.8 us at 10 Gbit/s, RTTbytes 9.7 KB.
        assertTrue(rtt > 9_000 && rtt < 10_500, "rtt bytes " + rtt);
    }

    @Test
    void fittedCutoffsGiveEachUnscheduledLevelItsShare() {
        EngineConfig cfg = EngineConfig.defaults();
        int[] c = SimTuner.fittedCutoffs(Workload.named("w4"), cfg);
        assertEquals(0, c[cfg.maxScheduledPriority], "scheduled levels have no cutoff");
        for (int level = 7; level > cfg.maxScheduledPriority + 1; level--) {
            assertTrue(c[level] < c[level - 1], "cutoffs grow towards lower levels: " + java.util.Arrays.toString(c));
        }
        assertEquals(cfg.maxMessageLength, c[cfg.maxScheduledPriority + 1], "the lowest unscheduled level takes every length");
    }
}
