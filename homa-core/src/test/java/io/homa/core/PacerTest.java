package io.homa.core;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The pacer at the default 25,000 Mbit/s: 0.32 ns per byte, so 1,500 bytes take 480 ns and the
 * 5,000 ns queue allowance is 15,625 bytes.
 */
class PacerTest {
    private static final int LONG = 100_000;

    private static Pacer pacer() {
        return new Pacer(EngineConfig.defaults());
    }

    private static Pacer pacer(EngineConfig.Builder b) {
        return new Pacer(b.build());
    }

    @Test
    void fresh_atTimeZero_mayTransmit() {
        assertTrue(pacer().mayTransmit(0, LONG));
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 1_000, 5_001, 123_456_789_000L, Long.MAX_VALUE / 2})
    void fresh_atPositiveTime_mayTransmit(long now) {
        assertTrue(pacer().mayTransmit(now, LONG), "a pacer that sent nothing holds nothing back");
    }

    @ParameterizedTest
    @ValueSource(longs = {-1, -1_000_000_000L, Long.MIN_VALUE / 2})
    void fresh_atNegativeTime_mayTransmit(long now) {
        // System.nanoTime() may be negative
        assertTrue(pacer().mayTransmit(now, LONG));
    }

    @Property(tries = 500)
    void property_whenHeld_nextSendTimeIsLaterAndReleases(
            @ForAll @LongRange(min = -2_000_000_000L, max = 2_000_000_000L) long start,
            @ForAll @Size(min = 1, max = 40) List<@IntRange(min = 0, max = 20_000) Integer> gaps,
            @ForAll @Size(min = 1, max = 40) List<@IntRange(min = 1, max = 70_000) Integer> sizes) {
        Pacer p = pacer();
        long now = start;
        for (int i = 0; i < Math.min(gaps.size(), sizes.size()); i++) {
            now += gaps.get(i);
            if (!p.mayTransmit(now, LONG)) {
                long t = p.nextSendTime();
                assertTrue(t > now, "held at " + now + " but nextSendTime " + t + " is not later");
                assertTrue(p.mayTransmit(t, LONG), "still held at nextSendTime " + t);
                assertFalse(p.mayTransmit(t - 1, LONG), "could have gone before nextSendTime " + t);
            }
            p.transmitted(now, sizes.get(i));
        }
    }

    @Property(tries = 300)
    void property_backlogNeverExceedsBytesSentSinceLastIdle(
            @ForAll @LongRange(min = -1_000_000_000L, max = 1_000_000_000L) long start,
            @ForAll @Size(min = 1, max = 30) List<@IntRange(min = 1, max = 9_000) Integer> sizes) {
        Pacer p = pacer();
        long total = 0;
        for (int s : sizes) {
            p.transmitted(start, s);
            total += s;
        }
        // all at one instant: the estimate is the sum of per-packet serialisation times (rounded down)
        long expected = 0;
        for (int s : sizes) {
            expected += s * 320L / 1000;
        }
        assertEquals(start + expected - 5_000, p.nextSendTime());
        assertTrue(expected <= total * 320 / 1000);
    }

    @Test
    void transmitted_1500BytesAt25Gbit_backlog480ns() {
        Pacer p = pacer();
        p.transmitted(1_000, 1500);
        assertEquals(1_000 + 480 - 5_000, p.nextSendTime());
    }

    @Test
    void transmitted_at10Gbit_800psPerByte() {
        Pacer p = pacer(EngineConfig.builder().linkMbps(10_000));
        p.transmitted(0, 1500);
        assertEquals(1200 - 5_000, p.nextSendTime());
    }

    @Test
    void transmitted_at100Gbit_80psPerByte() {
        Pacer p = pacer(EngineConfig.builder().linkMbps(100_000));
        p.transmitted(0, 10_000);
        assertEquals(800 - 5_000, p.nextSendTime());
    }

    @Test
    void transmitted_faultyFastLink_atLeastOnePicosecondPerByte() {
        Pacer p = pacer(EngineConfig.builder().linkMbps(100_000_000L));
        p.transmitted(0, 1_000_000);
        assertEquals(1_000 - 5_000, p.nextSendTime());
    }

    @Test
    void transmitted_backToBack_accumulates() {
        Pacer p = pacer();
        for (int i = 0; i < 10; i++) {
            p.transmitted(0, 1500);
        }
        assertEquals(4_800 - 5_000, p.nextSendTime());
    }

    @Test
    void backlogWithinAllowance_mayTransmit() {
        Pacer p = pacer();
        p.transmitted(0, 15_625); // exactly 5,000 ns
        assertTrue(p.mayTransmit(0, LONG));
    }

    @Test
    void backlogAboveAllowance_holdsLongMessage() {
        Pacer p = pacer();
        p.transmitted(0, 15_628); // 5,000.96 ns -> 5,000 ns after truncation
        p.transmitted(0, 4);      // +1 ns
        assertFalse(p.mayTransmit(0, LONG));
    }

    @Test
    void held_releasedExactlyAtNextSendTime() {
        Pacer p = pacer();
        p.transmitted(0, 100_000); // 32,000 ns
        long t = p.nextSendTime();
        assertEquals(27_000, t);
        assertFalse(p.mayTransmit(t - 1, LONG));
        assertTrue(p.mayTransmit(t, LONG));
    }

    @Test
    void backlog_drainsWithTime() {
        Pacer p = pacer();
        p.transmitted(0, 1_000_000); // 320 us
        assertFalse(p.mayTransmit(0, LONG));
        assertFalse(p.mayTransmit(100_000, LONG));
        assertFalse(p.mayTransmit(314_999, LONG));
        assertTrue(p.mayTransmit(315_000, LONG));
        assertTrue(p.mayTransmit(10_000_000, LONG));
    }

    @Test
    void transmitted_afterIdle_startsFromNowNotFromOldBacklog() {
        Pacer p = pacer();
        p.transmitted(0, 1500);
        p.transmitted(1_000_000, 1500);
        assertEquals(1_000_000 + 480 - 5_000, p.nextSendTime());
    }

    @Test
    void transmitted_whileBusy_queuesBehindBacklog() {
        Pacer p = pacer();
        p.transmitted(0, 31_250);        // busy until 10,000
        p.transmitted(2_000, 1500);      // still busy: ends 10,480
        assertEquals(10_480 - 5_000, p.nextSendTime());
    }

    @Test
    void transmitted_firstEverAtPositiveTime_startsFromNow() {
        Pacer p = pacer();
        p.transmitted(7_000_000, 1500);
        assertEquals(7_000_000 + 480 - 5_000, p.nextSendTime());
        assertTrue(p.mayTransmit(7_000_000, LONG));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 100, 500, 999})
    void shortMessage_neverHeldBack(int remaining) {
        Pacer p = pacer();
        p.transmitted(0, 10_000_000); // 3.2 ms of backlog
        assertTrue(p.mayTransmit(0, remaining));
    }

    @Test
    void messageOfExactlyThrottleMinBytes_isHeldBack() {
        Pacer p = pacer();
        p.transmitted(0, 10_000_000);
        assertFalse(p.mayTransmit(0, 1_000));
    }

    @Test
    void throttleMinBytesZero_evenEmptyRemainderHeld() {
        Pacer p = pacer(EngineConfig.builder().throttleMinBytes(0));
        p.transmitted(0, 10_000_000);
        assertFalse(p.mayTransmit(0, 0));
    }

    @Test
    void customThrottleMinBytes_respected() {
        Pacer p = pacer(EngineConfig.builder().throttleMinBytes(50_000));
        p.transmitted(0, 10_000_000);
        assertTrue(p.mayTransmit(0, 49_999));
        assertFalse(p.mayTransmit(0, 50_000));
    }

    @Test
    void disabled_neverHoldsBack() {
        Pacer p = pacer(EngineConfig.builder().pacerEnabled(false));
        p.transmitted(0, Integer.MAX_VALUE);
        assertTrue(p.mayTransmit(0, Integer.MAX_VALUE));
        assertTrue(p.mayTransmit(5, LONG));
    }

    @Test
    void fifoTestMode_neverHoldsBack() {
        Pacer p = pacer(EngineConfig.builder().fifoBaselineForTests());
        p.transmitted(0, Integer.MAX_VALUE);
        assertTrue(p.mayTransmit(0, LONG));
    }

    @Test
    void zeroQueueAllowance_anyBacklogHolds() {
        Pacer p = pacer(EngineConfig.builder().maxNicQueueNanos(0));
        assertTrue(p.mayTransmit(100, LONG));
        p.transmitted(100, 1500);
        assertFalse(p.mayTransmit(100, LONG));
        assertFalse(p.mayTransmit(579, LONG));
        assertTrue(p.mayTransmit(580, LONG));
        assertEquals(580, p.nextSendTime());
    }

    @Test
    void largerQueueAllowance_holdsLater() {
        Pacer p = pacer(EngineConfig.builder().maxNicQueueNanos(50_000));
        p.transmitted(0, 150_000); // 48,000 ns
        assertTrue(p.mayTransmit(0, LONG));
        p.transmitted(0, 10_000);  // 51,200 ns
        assertFalse(p.mayTransmit(0, LONG));
        assertEquals(1_200, p.nextSendTime());
    }

    @Test
    void hugeTransmit_noOverflow() {
        Pacer p = pacer(EngineConfig.builder().linkMbps(1));
        p.transmitted(0, Integer.MAX_VALUE); // 8 us per byte
        assertEquals(8_000L * Integer.MAX_VALUE - 5_000, p.nextSendTime());
        assertFalse(p.mayTransmit(0, LONG));
    }

    // ------------------------------------------------------------------ wake-ups and late credit

    /** Hands the link 1,500-byte datagrams at {@code now} while the pacer allows; returns how many. */
    private static int sendWhileAllowed(Pacer p, long now) {
        int n = 0;
        while (p.mayTransmit(now, LONG) && n < 100_000) {
            p.transmitted(now, 1500);
            n++;
        }
        return n;
    }

    @Test
    void hold_wakesWhenHalfTheAllowanceHasDrained() {
        Pacer p = pacer();
        p.transmitted(0, 100_000); // 32,000 ns
        long wake = p.hold();
        assertEquals(32_000 - 2_500, wake);
        assertTrue(wake >= p.nextSendTime());
        assertEquals(6, sendWhileAllowed(p, wake), "a wake-up sends a batch: half the allowance and one more");
    }

    @Test
    void hold_zeroAllowance_wakesWhenTheLinkIsIdle() {
        Pacer p = pacer(EngineConfig.builder().maxNicQueueNanos(0));
        p.transmitted(0, 1500);
        assertEquals(480, p.hold());
    }

    @Test
    void lateWakeUp_afterHold_sendsWhatTheLinkCouldHaveCarried() {
        Pacer p = pacer();
        p.transmitted(0, 100_000);          // the link runs dry at 32,000
        p.hold();
        long late = 32_000 + 200_000;      // woken 200 us after the link ran dry
        int sent = sendWhileAllowed(p, late);
        // from 32,000 until 5,000 ns ahead of now: 205,000 ns of link time, 480 ns a datagram
        assertEquals(428, sent);
        assertFalse(p.mayTransmit(late, LONG));
    }

    @Test
    void lateWakeUp_withoutCredit_losesTheTime() {
        Pacer p = pacer(EngineConfig.builder().pacerLateCreditNanos(0));
        p.transmitted(0, 100_000);
        p.hold();
        assertEquals(11, sendWhileAllowed(p, 232_000), "only the allowance, as if the link had been idle");
    }

    @Test
    void lateWakeUp_creditCappedAtPacerLateCreditNanos() {
        Pacer p = pacer(EngineConfig.builder().pacerLateCreditNanos(50_000));
        p.transmitted(0, 100_000);
        p.hold();
        assertEquals(115, sendWhileAllowed(p, 232_000), "55,000 ns of link time: credit plus allowance");
    }

    @Test
    void noHold_idleLinkEarnsNoCredit() {
        Pacer p = pacer();
        p.transmitted(0, 100_000);
        assertEquals(11, sendWhileAllowed(p, 232_000), "nothing was held back: the idle time is not owed");
    }

    @Test
    void idle_afterHold_creditDropped() {
        Pacer p = pacer();
        p.transmitted(0, 100_000);
        p.hold();
        p.idle();                          // the sender had nothing left to send
        assertEquals(11, sendWhileAllowed(p, 232_000));
    }

    @Test
    void credit_spentOnceTheEstimateCaughtUp() {
        Pacer p = pacer();
        p.transmitted(0, 100_000);
        p.hold();
        sendWhileAllowed(p, 232_000);      // caught up: the estimate is ahead of the clock again
        p.transmitted(10_000_000, 1500);   // much later, without a hold in between
        assertEquals(10_000_000 + 480 - 5_000, p.nextSendTime());
    }

    @Test
    void credit_disabledPacer_stillNeverHolds() {
        Pacer p = pacer(EngineConfig.builder().pacerEnabled(false));
        p.transmitted(0, 100_000);
        p.hold();
        assertTrue(p.mayTransmit(0, LONG));
    }
}
