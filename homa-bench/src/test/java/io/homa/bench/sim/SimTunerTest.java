package io.homa.bench.sim;

import io.homa.core.EngineConfig;
import io.homa.core.sim.Workload;
import io.homa.core.sim.DatacenterTopology;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

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
    void searchMovesEachSettingFromTheBestSoFar() {
        // A separable score whose best is off every axis through the start: each setting must be
        // tried with the others at the best found before it, or (9740, 4, 16, fitted-2) is never run.
        SimTuner.Setting start = new SimTuner.Setting(16_000, 8, 8, "linux");
        List<SimTuner.Setting> ran = new ArrayList<>();
        List<Map<String, Object>> ranked = SimTuner.search(start, new int[]{9_740, 16_000, 40_000}, new int[]{2, 4, 8},
                new int[]{1, 8, 16}, s -> {
                    ran.add(s);
                    double p99 = 1 + (s.unscheduledBytes() == 9_740 ? 0 : 1) + (s.maxOvercommit() == 4 ? 0 : 1)
                            + (s.grantBatchSegments() == 16 ? 0 : 1) + (s.cutoffs().equals("fitted-2") ? 0 : 1);
                    Map<String, Object> r = new HashMap<>();
                    r.put("completed_bytes_fraction", 1.0);
                    r.put("short_p99_slowdown", p99);
                    return r;
                });
        assertEquals(new SimTuner.Setting(9_740, 4, 16, "fitted-2"), ranked.get(0).get("setting_record"));
        assertEquals(1.0, (Double) ranked.get(0).get("short_p99_slowdown"));
        assertEquals(3 + 2 + 2 + 2, ran.size(), "each setting once: " + ran);
        assertEquals(ran.size(), new HashSet<>(ran).size());
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
