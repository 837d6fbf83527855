package io.homa;

import io.homa.core.EngineConfig;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Protocol settings HomaConfig derives from the bind address and the link rate, and those it passes on. */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class HomaConfigDefaultsTest {
    private static final EngineConfig D = EngineConfig.defaults();
    private static final InetSocketAddress WILDCARD = new InetSocketAddress(0);

    private static HomaConfig.Builder onEthernet() {
        return HomaConfig.builder().bindAddress(WILDCARD); // wildcard: MTU 1,500
    }

    @Test
    void defaultLink_unscheduledBytesCoverEightyMicroseconds_budgetHalfAMillisecondOfTheLink() {
        EngineConfig e = onEthernet().build().engineConfig();
        assertEquals(250_000, e.unscheduledBytes, "80 us at 25 Gbit/s: a user-space round trip to the first grant, not Linux Homa's 40,000");
        assertEquals(250_000, onEthernet().linkMbps(25_000).build().engineConfig().unscheduledBytes, "the default rate, given");
        assertEquals(250_000, onEthernet().mtu(65_535).build().engineConfig().unscheduledBytes, "at any MTU");
        assertEquals(40_000, onEthernet().unscheduledBytes(40_000).build().engineConfig().unscheduledBytes, "a choice wins");
        assertEquals(100_000, onEthernet().maxIncoming(400_000).build().engineConfig().unscheduledBytes,
                "at most a quarter of the grant budget");
        assertEquals(D.unscheduledBytes, onEthernet().maxIncoming(100_000).build().engineConfig().unscheduledBytes,
                "never below the engine's own");
        assertEquals(1_562_500, e.maxIncoming, "0.5 ms at 25 Gbit/s: a user-space grant turnaround, not Linux Homa's 400,000");
        assertEquals(1_562_500, onEthernet().mtu(9_000).build().engineConfig().maxIncoming, "a chosen MTU of 9,000 too");
        assertEquals(400_000, onEthernet().maxIncoming(400_000).build().engineConfig().maxIncoming, "a chosen budget wins");
    }

    @Test
    void largeMtu_chosenOrDerived_getsTheLargeMtuBudget() {
        assertEquals(HomaConfig.LARGE_MTU_MAX_INCOMING, onEthernet().mtu(9_001).build().engineConfig().maxIncoming);
        assertEquals(HomaConfig.LARGE_MTU_MAX_INCOMING, onEthernet().mtu(65_535).build().engineConfig().maxIncoming);
    }

    @Test
    void tenGigabitLink_budgetIsHalfAMillisecond_noStepDownBelowTheDefaultLink() {
        assertEquals(625_000, onEthernet().linkMbps(10_000).build().engineConfig().maxIncoming);
        long below = onEthernet().linkMbps(24_999).build().engineConfig().maxIncoming;
        long at = onEthernet().linkMbps(25_000).build().engineConfig().maxIncoming;
        assertEquals(at, below, 100, "24,999 and 25,000 Mbit/s differ by a link's 0.5 ms of 1 Mbit/s at most");
    }

    @Test
    void slowLink_scalesUnscheduledAndBudget_toSegmentFloors() {
        EngineConfig e = onEthernet().linkMbps(10).build().engineConfig();
        assertEquals(1500, e.mtu);
        assertEquals(e.segmentPayload(), e.unscheduledBytes, "one segment, not 40,000 bytes");
        assertEquals(10 * e.segmentPayload(), e.maxIncoming, "ten segments: more than 5 ms at 10 Mbit/s");
    }

    @Test
    void slowLink_pacerAllowsHalfAMillisecondInTheNic() {
        EngineConfig e = onEthernet().linkMbps(100).build().engineConfig();
        assertEquals(500_000, e.maxNicQueueNanos, "about four 1,500-byte packets at 100 Mbit/s");
        assertEquals(500_000, onEthernet().linkMbps(10).build().engineConfig().maxNicQueueNanos);
        assertEquals(D.maxNicQueueNanos, onEthernet().build().engineConfig().maxNicQueueNanos);
    }

    @Test
    void pacer_isOnOnlyWhereTheLinkIsDescribed_orAsChosen() {
        assertFalse(onEthernet().build().engineConfig().pacerEnabled, "no link rate given: no pacing to a guess");
        assertTrue(onEthernet().linkMbps(25_000).build().engineConfig().pacerEnabled, "a given rate, even the default one");
        assertTrue(onEthernet().linkMbps(100).build().engineConfig().pacerEnabled);
        assertTrue(onEthernet().maxNicQueue(Duration.ofNanos(5_000)).build().engineConfig().pacerEnabled);
        assertTrue(onEthernet().pacerEnabled(true).build().engineConfig().pacerEnabled);
        assertFalse(onEthernet().linkMbps(100).pacerEnabled(false).build().engineConfig().pacerEnabled, "a choice wins");
        assertTrue(D.pacerEnabled, "the engine's own default (the simulator's, whose links are known) is unchanged");
    }

    @Test
    void pacer_derivedAgain_whenABuilderIsBuiltAgainWithALink() {
        HomaConfig.Builder b = onEthernet();
        assertFalse(b.build().engineConfig().pacerEnabled);
        assertTrue(b.linkMbps(10_000).build().engineConfig().pacerEnabled);
        HomaConfig c = onEthernet().build();
        assertFalse(c.toBuilder().build().engineConfig().pacerEnabled);
        assertTrue(c.toBuilder().linkMbps(10_000).build().engineConfig().pacerEnabled,
                "a pacer off for want of a link is derived again (toBuilder)");
        HomaConfig off = onEthernet().linkMbps(10_000).pacerEnabled(false).build();
        assertFalse(off.toBuilder().linkMbps(1_000).build().engineConfig().pacerEnabled, "a choice stays a choice");
        HomaConfig on = onEthernet().linkMbps(10_000).build();
        assertTrue(on.toBuilder().build().engineConfig().pacerEnabled, "a running pacer stays on");
    }

    @Test
    void everyDerivedSettingGiven_nothingDerived() {
        EngineConfig mine = EngineConfig.builder().linkMbps(10).build();
        EngineConfig e = onEthernet().linkMbps(10).unscheduledBytes(mine.unscheduledBytes).maxIncoming(mine.maxIncoming)
                .maxNicQueue(Duration.ofNanos(mine.maxNicQueueNanos)).build().engineConfig();
        assertEquals(mine.unscheduledBytes, e.unscheduledBytes);
        assertEquals(mine.maxIncoming, e.maxIncoming);
        assertEquals(mine.maxNicQueueNanos, e.maxNicQueueNanos);
    }

    @Test
    void publicGetters_showWhatWasDerived() {
        HomaConfig c = onEthernet().linkMbps(10).build();
        EngineConfig e = c.engineConfig();
        assertEquals(e.mtu, c.mtu());
        assertEquals(e.unscheduledBytes, c.unscheduledBytes());
        assertEquals(e.maxIncoming, c.maxIncoming());
        assertEquals(10, c.linkMbps());
    }

    @Test
    void rebuiltConfig_keepsItsDerivedValues() {
        HomaConfig c = onEthernet().linkMbps(10).build();
        assertEquals(c.engineConfig().toString(), c.toBuilder().build().engineConfig().toString());
    }

    @Test
    void slowerLink_scalesUnscheduledInProportion_budgetCoversFiveMillisecondsUpToTheDefault() {
        EngineConfig e = onEthernet().linkMbps(2_500).build().engineConfig();
        assertEquals(D.unscheduledBytes / 10, e.unscheduledBytes);
        assertEquals(D.maxIncoming, e.maxIncoming, "5 ms at 2.5 Gbit/s is more than the default budget");
        EngineConfig t = onEthernet().linkMbps(100).build().engineConfig();
        assertEquals(62_500, t.maxIncoming, "5 ms at 100 Mbit/s (the testbed), not ten segments");
        assertEquals(t.segmentPayload(), t.unscheduledBytes);
    }

    @Test
    void fasterLink_unscheduledBytesAtMostAQuarterOfTheBudget_budgetCappedAtTheLargeMtuOne() {
        EngineConfig e = onEthernet().linkMbps(100_000).build().engineConfig();
        assertEquals(HomaConfig.LARGE_MTU_MAX_INCOMING / 4, e.unscheduledBytes, "80 us at 100 Gbit/s (1 MB), capped");
        assertEquals(HomaConfig.LARGE_MTU_MAX_INCOMING, e.maxIncoming, "0.5 ms at 100 Gbit/s (6.25 MB), capped");
    }

    @Test
    void explicitSettings_win() {
        EngineConfig e = onEthernet().linkMbps(10).unscheduledBytes(5_000).build().engineConfig();
        assertEquals(5_000, e.unscheduledBytes);
        assertEquals(10 * e.segmentPayload(), e.maxIncoming, "the budget, not chosen, still follows the link");
        EngineConfig f = onEthernet().linkMbps(10).maxIncoming(50_000).build().engineConfig();
        assertEquals(50_000, f.maxIncoming);
        assertEquals(f.segmentPayload(), f.unscheduledBytes);
    }

    @Test
    void everyProtocolSetter_reachesTheEngine() {
        EngineConfig e = onEthernet().grantWindow(30_000).grantFifoFraction(0).fifoGrantIncrement(7_000)
                .maxScheduledPriority(2).defaultUnscheduledPriority(5).maxNicQueue(Duration.ofNanos(7_000))
                .throttleMinBytes(900).resendIntervalTicks(9).needAckTicks(6).ackDelayTicks(1)
                .timerTrafficPercent(20).tombstoneTicks(0).cutoffsInterval(Duration.ofMillis(3))
                .maxServerRpcsPerPeer(11).maxBufferedBytesPerPeer(1L << 24).maxOutgoingBytes(1L << 25)
                .grantBatchSegments(4).pacerLateCredit(Duration.ofNanos(200_000))
                .build().engineConfig();
        assertEquals(30_000, e.grantWindow);
        assertEquals(4, e.grantBatchSegments);
        assertEquals(200_000, e.pacerLateCreditNanos);
        assertEquals(0, e.grantFifoFraction);
        assertEquals(7_000, e.fifoGrantIncrement);
        assertEquals(2, e.maxScheduledPriority);
        assertEquals(5, e.defaultUnscheduledPriority);
        assertEquals(7_000, e.maxNicQueueNanos);
        assertEquals(900, e.throttleMinBytes);
        assertEquals(9, e.resendIntervalTicks);
        assertEquals(6, e.needAckTicks);
        assertEquals(1, e.ackDelayTicks);
        assertEquals(20, e.timerTrafficPercent);
        assertEquals(0, e.tombstoneTicks);
        assertEquals(3_000_000, e.cutoffsIntervalNanos);
        assertEquals(11, e.maxServerRpcsPerPeer);
        assertEquals(1L << 24, e.maxBufferedBytesPerPeer);
        assertEquals(1L << 25, e.maxOutgoingBytes);
    }
}
