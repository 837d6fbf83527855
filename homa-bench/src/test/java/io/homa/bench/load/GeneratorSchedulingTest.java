package io.homa.bench.load;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The generator's scheduling class, and the machine's CPU shares, as load-node records them. */
class GeneratorSchedulingTest {
    @Test
    void normalScheduling_isLeftAlone_andSaysSo() {
        assertEquals("normal (asked)", GeneratorScheduling.apply(false));
    }

    @Test
    void realTimeScheduling_isGranted_orSaysWhyNot() throws Exception {
        // On a thread of its own: the class sticks to the thread it was given to.
        String[] got = new String[1];
        Thread t = new Thread(() -> got[0] = GeneratorScheduling.apply(true));
        t.start();
        t.join();
        assertTrue(got[0].equals("SCHED_FIFO " + GeneratorScheduling.FIFO_PRIORITY) || got[0].startsWith("normal ("),
                got[0]);
        if (System.getProperty("user.name").equals("root") && got[0].startsWith("normal")) {
            // As root the only reasons are a missing chrt or a kernel that refuses: say which.
            assertTrue(got[0].contains("chrt") || got[0].contains("Linux"), got[0]);
        }
    }

    @Test
    void machineShares_coverTheInterval() {
        MachineCpuShares m = new MachineCpuShares();
        m.start();
        long until = System.nanoTime() + 50_000_000L;
        long spin = 0;
        while (System.nanoTime() < until) {
            spin++; // some CPU time to account for
        }
        m.stop();
        Map<String, Object> j = m.json();
        assumeTrue(!j.isEmpty(), "no /proc/stat here, or no tick in 50 ms: nothing to check (" + spin + ")");
        double sum = 0;
        for (String k : new String[] {"machineUserShare", "machineSystemShare", "machineIrqShare",
                "machineSoftirqShare", "machineStealShare", "machineIdleShare"}) {
            double v = (Double) j.get(k);
            assertTrue(v >= 0 && v <= 1, k + " " + v);
            sum += v;
        }
        assertTrue(sum <= 1.0 + 1e-9, "shares of one interval add up to at most all of it: " + sum);
    }
}
