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

    @Test
    void settingsBuildTheEngineTheyName() {
        EngineConfig base = EngineConfig.defaults();
        Workload w4 = Workload.named("w4");
        EngineConfig linux = new SimTuner.Setting(9_000, 4, 16, "linux").engine(base, w4);
        assertEquals(9_000, linux.unscheduledBytes);
        assertEquals(4, linux.maxOvercommit);
        assertEquals(16, linux.grantBatchSegments);
        assertEquals(java.util.Arrays.toString(base.unscheduledCutoffs()), java.util.Arrays.toString(linux.unscheduledCutoffs()));

        EngineConfig two = new SimTuner.Setting(9_000, 4, 16, "fitted-2").engine(base, w4);
        assertEquals(5, two.maxScheduledPriority, "two unscheduled levels leave six to scheduled data");
        int[] c = two.unscheduledCutoffs();
        assertTrue(c[7] > 0 && c[7] < c[6] && c[6] == base.maxMessageLength, java.util.Arrays.toString(c));
        assertEquals(0, c[5], "no cutoff on a scheduled level");
    }
}
