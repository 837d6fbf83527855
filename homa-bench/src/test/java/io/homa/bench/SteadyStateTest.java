package io.homa.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** compare's steady-state rule: a repetition counts when the JIT compiled for under 2% of its measured interval. */
class SteadyStateTest {
    private static RunResult run(double jitMs, double measuredSeconds, String error) {
        return new RunResult("homa", Scenario.UNLOADED_100B, 0, new LatencyStats(100, 50, 90, 99, 120, 55), 1000, 0,
                null, 10, 100, 1, 2, error, jitMs, measuredSeconds);
    }

    @Test
    void underTwoPercentOfTheInterval_isSteady_twoPercentOrMoreIsNot() {
        assertTrue(run(0, 1.0, null).steady());
        assertTrue(run(19.9, 1.0, null).steady());
        assertFalse(run(20, 1.0, null).steady(), "2% exactly is not under 2%");
        assertFalse(run(500, 1.2, null).steady());
        assertEquals(0.25, run(250, 1.0, null).jitShare(), 1e-9);
    }

    @Test
    void whatCannotBeJudged_isNotHeldAgainstTheRun() {
        assertTrue(run(Double.NaN, 1.0, null).steady(), "no JIT monitoring on this JVM");
        assertTrue(run(500, Double.NaN, null).steady(), "interval unknown");
        assertTrue(run(500, 1.0, "boom").steady(), "a failed run is reported as failed, not as unsteady");
        assertTrue(Double.isNaN(run(Double.NaN, 1.0, null).jitShare()));
    }

    @Test
    void aSummary_keepsItsUnsteadyRepetitionsOutOfTheFigures() {
        Summary s = Summary.of("homa", Scenario.UNLOADED_100B,
                List.of(run(0, 1, null), run(300, 1, null), run(5, 1, null), run(900, 1, "failed")));
        assertEquals(1, s.unsteadyRepetitions());
        assertEquals(2, s.succeeded(), "the two steady repetitions count");
        assertEquals(1, s.failedRepetitions());
        assertEquals(2, s.okRuns().size());
        assertTrue(s.okRuns().stream().allMatch(RunResult::steady), "no counted repetition had the JIT compiling");
        assertEquals(2.5, s.jitMs(), 1e-9, "the median of the counted repetitions' 0 and 5 ms");
    }
}
