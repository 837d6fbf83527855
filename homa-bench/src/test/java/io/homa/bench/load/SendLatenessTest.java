package io.homa.bench.load;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Lateness is told apart by cause, from synthetic timestamps (no clock involved). */
class SendLatenessTest {
    private static final long MS = 1_000_000L;

    @Test
    void generatorWakingLate_isCpuLateness() {
        SendLateness l = new SendLateness();
        // due at 100 ms, the previous call returned long before, the generator called at 103 ms
        l.generator(100 * MS, 103 * MS, 49 * MS, 50 * MS, 0);
        Map<String, Object> j = l.json();
        assertEquals(1L, j.get("sendsLateOver1ms"));
        assertEquals(1L, j.get("sendsCpuLateOver1ms"));
        assertEquals(0L, j.get("sendsInCallLateOver1ms"));
        assertEquals(3000.0, j.get("maxCpuLagUs"));
    }

    @Test
    void previousCallReturningLate_isTheTransports() {
        SendLateness l = new SendLateness();
        // due at 100 ms; the previous call() ran from 99 ms to 104 ms; the generator called at 104.2 ms
        l.generator(100 * MS, 104 * MS + 200_000, 99 * MS, 104 * MS, 0);
        Map<String, Object> j = l.json();
        assertEquals(1L, j.get("sendsLateOver1ms"));
        assertEquals(0L, j.get("sendsCpuLateOver1ms"), "only 0.2 ms of the 4.2 ms were the generator's own");
        assertEquals(1L, j.get("sendsInCallLateOver1ms"));
    }

    @Test
    void lateOnBothCounts_splitsTheLag() {
        SendLateness l = new SendLateness();
        // due at 100 ms, previous call ran from 99 to 102 ms, generator called at 105 ms: 2 ms in call, 3 ms CPU
        l.generator(100 * MS, 105 * MS, 99 * MS, 102 * MS, 0);
        Map<String, Object> j = l.json();
        assertEquals(1L, j.get("sendsCpuLateOver1ms"));
        assertEquals(1L, j.get("sendsInCallLateOver1ms"));
        assertEquals(3000.0, j.get("maxCpuLagUs"));
        assertEquals(5000.0, j.get("maxSendLagUs"));
    }

    @Test
    void backlogAfterAStall_isCpuLateness_notTheShortCallsBeforeIt() {
        SendLateness l = new SendLateness();
        // sends due at 100 and 110 ms; the generator only ran again at 150 ms, sent the first
        // (150.00-150.01 ms in call()) and then the second at 150.01 ms
        l.generator(100 * MS, 150 * MS, 0, 0, 0);
        l.generator(110 * MS, 150 * MS + 10_000, 150 * MS, 150 * MS + 10_000, 0);
        Map<String, Object> j = l.json();
        assertEquals(2L, j.get("sendsCpuLateOver1ms"));
        assertEquals(0L, j.get("sendsInCallLateOver1ms"));
    }

    @Test
    void gcPauseDuringThePreviousCall_isNotTheTransports() {
        SendLateness l = new SendLateness();
        // due at 100 ms; the previous call() ran from 99 to 104 ms, 4 ms of which were a GC pause
        l.generator(100 * MS, 104 * MS, 99 * MS, 104 * MS, 4 * MS);
        Map<String, Object> j = l.json();
        assertEquals(0L, j.get("sendsInCallLateOver1ms"));
        assertEquals(1L, j.get("sendsCpuLateOver1ms"));
    }

    @Test
    void onTimeAndEarlyCalls_areNotLate() {
        SendLateness l = new SendLateness();
        l.generator(100 * MS, 100 * MS + 900_000, 0, 0, 0); // 0.9 ms: within the limit
        l.generator(200 * MS, 199 * MS, 0, 0, 0);           // woke early: no lag
        assertEquals(0L, l.json().get("sendsLateOver1ms"));
        assertEquals(0.0, l.cpuLateFraction());
    }

    @Test
    void fullSendBuffer_isHeldByTheTransport_notCpu() {
        SendLateness l = new SendLateness();
        l.generator(100 * MS, 100 * MS, 0, 0, 0);
        // taken up by the I/O thread at once, behind 7 ms of earlier bytes on its connection
        l.transport(100 * MS, 100 * MS + 100_000, 107 * MS);
        // taken up 2 ms late by the I/O thread, written at once
        l.transport(100 * MS, 102 * MS, 102 * MS);
        Map<String, Object> j = l.json();
        assertEquals(2L, j.get("sendsObservedInTransport"));
        assertEquals(1L, j.get("sendsHeldByTransportOver1ms"));
        assertEquals(1L, j.get("sendsIoThreadLateOver1ms"));
        assertEquals(0L, j.get("sendsCpuLateOver1ms"));
        assertEquals(6900.0, j.get("maxHeldByTransportUs"));
    }

    @Test
    void validity_followsTheStatedLimit() {
        SendLateness l = new SendLateness();
        for (int i = 0; i < 100; i++) {
            l.generator(i * 10 * MS, i * 10 * MS, 0, 0, 0);
        }
        assertTrue(SendLateness.valid(l.cpuLateFraction()));
        l.generator(2000 * MS, 2005 * MS, 0, 0, 0);
        assertTrue(SendLateness.valid(l.cpuLateFraction()), "1 of 101 late: within 1%");
        l.generator(3000 * MS, 3005 * MS, 0, 0, 0); // 2 of 102 late: above 1%
        assertEquals(2.0 / 102, l.cpuLateFraction(), 1e-12);
        assertFalse(SendLateness.valid(l.cpuLateFraction()));
        assertTrue(SendLateness.valid(SendLateness.CPU_LATE_LIMIT), "the limit itself is still valid");
    }

    @Test
    void lateSends_areAttributedToTheLargestPartOfTheirWait() {
        SendLateness l = new SendLateness();
        // 5 ms late: 4 ms of it runnable on a run queue
        l.cause(100 * MS, 105 * MS, true, 4 * MS, 0);
        // 5 ms late: a 3 ms GC pause, 0.5 ms on a run queue
        l.cause(200 * MS, 205 * MS, true, MS / 2, 3 * MS);
        // 5 ms late and neither: the thread woke late (its timer, a safepoint, the VM paused)
        l.cause(300 * MS, 305 * MS, true, 0, 0);
        // sent at once after it, late for the same reason
        l.cause(301 * MS, 305 * MS + 10_000, false, -1, 0);
        // on time (under 1 ms late): not attributed
        l.cause(400 * MS, 400 * MS + 500_000, true, 400_000, 0);
        Map<String, Object> j = l.json();
        assertEquals(1L, j.get("lateWaitingForCpu"));
        assertEquals(1L, j.get("lateInGc"));
        assertEquals(2L, j.get("lateWokenLate"));
        assertEquals(1L, j.get("lateInBacklogOfThese"));
        assertEquals(4.5, (double) j.get("lateRunQueueMs"), 1e-9);
        assertEquals(3.0, (double) j.get("lateGcMs"), 1e-9);
        assertEquals(1.0 + 1.5 + 5.0, (double) j.get("lateWokenLateMs"), 1e-9);
        assertEquals(true, j.get("lateCauseKnown"));
    }

    @Test
    void unknownRunQueueTime_isSaid() {
        SendLateness l = new SendLateness();
        l.cause(100 * MS, 105 * MS, true, -1, 0);
        assertEquals(false, l.json().get("lateCauseKnown"));
        assertEquals(1L, l.json().get("lateWokenLate"));
    }

    @Test
    void theSchedulerAccount_ofThisThread_grows() {
        try (ThreadSchedStat s = ThreadSchedStat.ofCurrentThread()) {
            long first = s.runQueueNanos();
            org.junit.jupiter.api.Assumptions.assumeTrue(first >= 0,
                    "no /proc/thread-self/schedstat here (not Linux, or no schedstats): nothing to read");
            assertTrue(s.runQueueNanos() >= first, "a re-read gives the thread's account again, never less");
        }
    }
}
