package io.homa.core;

import io.homa.core.wire.WireFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Defaults (as in homa-protocol.md), derived sizes, toBuilder, and validation of every setter. */
class EngineConfigTest {
    private static final EngineConfig D = EngineConfig.defaults();

    // ------------------------------------------------------------------ defaults

    @Test
    void defaults_unscheduledBytes40000() {
        assertEquals(40_000, D.unscheduledBytes);
    }

    @Test
    void defaults_maxIncoming400000() {
        assertEquals(400_000, D.maxIncoming);
    }

    @Test
    void defaults_maxOvercommit8() {
        assertEquals(8, D.maxOvercommit);
    }

    @Test
    void defaults_grantWindowDynamic() {
        assertEquals(0, D.grantWindow);
    }

    @Test
    void defaults_cutoffs200_2800_15000_1000000AtLevels7To4() {
        int[] c = D.unscheduledCutoffs();
        assertEquals(200, c[7]);
        assertEquals(2_800, c[6]);
        assertEquals(15_000, c[5]);
        assertEquals(1_000_000, c[4]);
        assertArrayEquals(new int[]{0, 0, 0, 0}, java.util.Arrays.copyOf(c, 4));
    }

    @Test
    void defaults_levels0To3Scheduled_unscheduledDefaultLevel6() {
        assertEquals(3, D.maxScheduledPriority);
        assertEquals(6, D.defaultUnscheduledPriority);
    }

    @Test
    void defaults_tickOneMillisecond() {
        assertEquals(1_000_000L, D.tickNanos);
    }

    @Test
    void defaults_resendAfter5TicksThenEvery5() {
        assertEquals(5, D.resendTicks);
        assertEquals(5, D.resendIntervalTicks);
    }

    @Test
    void defaults_limits() {
        assertEquals(1L << 30, D.maxBufferedBytes);
        assertEquals(256L << 20, D.maxBufferedBytesPerPeer);
        assertEquals(1L << 30, D.maxOutgoingBytes);
        assertEquals(10_000, D.maxServerRpcsPerPeer);
        assertEquals(1_000_000, D.maxRpcs);
        assertEquals(64 << 20, D.maxMessageLength);
    }

    @Test
    void toString_namesTheLimits() {
        String s = D.toString();
        assertTrue(s.contains("maxBufferedBytesPerPeer=268435456"), s);
        assertTrue(s.contains("maxOutgoingBytes=1073741824"), s);
    }

    @Test
    void defaults_timeout100Ticks() {
        assertEquals(100, D.timeoutTicks);
    }

    @Test
    void defaults_grantFifo50Per1000In50000Steps() {
        assertEquals(50, D.grantFifoFraction);
        assertEquals(50_000, D.fifoGrantIncrement);
    }

    @Test
    void defaults_grantsBatchedByEightSegments() {
        assertEquals(8, D.grantBatchSegments);
    }

    @Test
    void defaults_pacerMakesUpHalfAMillisecondOfLateWakeUp() {
        assertEquals(500_000L, D.pacerLateCreditNanos);
    }

    @Test
    void defaults_link25000MbitAndFiveMicrosecondNicQueue() {
        assertEquals(25_000L, D.linkMbps);
        assertEquals(5_000L, D.maxNicQueueNanos);
    }

    @Test
    void defaults_pacerOnAndShortMessagesUnder1000Exempt() {
        assertTrue(D.pacerEnabled);
        assertEquals(1_000, D.throttleMinBytes);
        assertFalse(D.fifoSendOrderForTests);
        assertFalse(D.unscheduledAtLevelZeroForTests);
    }

    @Test
    void defaults_ipv4Mtu1500() {
        assertEquals(1500, D.mtu);
        assertEquals(WireFormat.IPV4_UDP_OVERHEAD, D.ipUdpOverhead);
    }

    @Test
    void defaults_clientHoldsAcksTwoTicks_serverAsksAfterFour() {
        assertEquals(2, D.ackDelayTicks);
        assertEquals(4, D.needAckTicks);
        assertTrue(D.needAckTicks > D.ackDelayTicks, "the server asks only after the client would have acked");
    }

    @Test
    void defaults_singleShard() {
        assertEquals(1, D.idShardCount);
        assertEquals(0, D.idShard);
    }

    @Test
    void defaults_sameValuesAsFreshBuilder() {
        assertConfigEquals(D, EngineConfig.builder().build());
        assertSame(D, EngineConfig.defaults());
    }

    // ------------------------------------------------------------------ derived sizes

    @Test
    void segmentPayload_ipv4Mtu1500_is1432() {
        assertEquals(1500 - 28 - 40, D.segmentPayload());
        assertEquals(1432, D.segmentPayload());
    }

    @Test
    void segmentPayload_ipv6Mtu1500_is1412() {
        EngineConfig c = EngineConfig.builder().ipUdpOverhead(WireFormat.IPV6_UDP_OVERHEAD).build();
        assertEquals(1412, c.segmentPayload());
        assertEquals(1452, c.maxDatagram());
    }

    @Test
    void segmentPayload_jumboFrames() {
        EngineConfig c = EngineConfig.builder().mtu(9000).build();
        assertEquals(9000 - 28 - 40, c.segmentPayload());
        assertEquals(9000 - 28, c.maxDatagram());
    }

    @Test
    void maxDatagram_isMtuMinusIpUdp() {
        assertEquals(1472, D.maxDatagram());
        assertEquals(D.segmentPayload() + WireFormat.DATA_HEADER, D.maxDatagram());
    }

    @Test
    void unscheduledLimit_default_roundsUpTo28Segments() {
        assertEquals(28 * 1432, D.unscheduledLimit());
        assertEquals(40_096, D.unscheduledLimit());
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 1431, 1432})
    void unscheduledLimit_upToOneSegment_isOneSegment(int bytes) {
        assertEquals(1432, EngineConfig.builder().unscheduledBytes(bytes).build().unscheduledLimit());
    }

    @Test
    void unscheduledLimit_exactMultiple_unchanged() {
        assertEquals(3 * 1432, EngineConfig.builder().unscheduledBytes(3 * 1432).build().unscheduledLimit());
        assertEquals(4 * 1432, EngineConfig.builder().unscheduledBytes(3 * 1432 + 1).build().unscheduledLimit());
    }

    @Test
    void unscheduledLimit_hugeValue_capsAtIntMaxWithoutOverflow() {
        EngineConfig c = EngineConfig.builder().unscheduledBytes(Integer.MAX_VALUE).build();
        assertEquals(Integer.MAX_VALUE, c.unscheduledLimit());
    }

    // ------------------------------------------------------------------ toBuilder, copies

    private static void assertConfigEquals(EngineConfig a, EngineConfig b) {
        for (Field f : EngineConfig.class.getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers())) {
                continue;
            }
            f.setAccessible(true);
            try {
                Object x = f.get(a);
                Object y = f.get(b);
                if (x instanceof int[] xs) {
                    assertArrayEquals(xs, (int[]) y, f.getName());
                } else {
                    assertEquals(x, y, f.getName());
                }
            } catch (IllegalAccessException e) {
                throw new AssertionError(e);
            }
        }
    }

    private static EngineConfig everythingChanged() {
        return EngineConfig.builder()
                .maxMessageLength(5_000_000).mtu(9000).ipUdpOverhead(48).unscheduledBytes(20_000)
                .maxIncoming(800_000).maxOvercommit(4).grantWindow(60_000).grantFifoFraction(100)
                .fifoGrantIncrement(30_000).grantBatchSegments(3).unscheduledCutoffs(0, 0, 0, 100, 200, 300, 400, 500)
                .maxScheduledPriority(2).defaultUnscheduledPriority(5).linkMbps(100_000)
                .maxNicQueueNanos(2_000).throttleMinBytes(500).pacerLateCreditNanos(20_000).pacerEnabled(false).maxGsoSegments(16).sendPayloadByReference(true)
                .tickNanos(500_000).resendTicks(3).resendIntervalTicks(4).timeoutTicks(50).needAckTicks(3).ackDelayTicks(1).timerTrafficPercent(20)
                .tombstoneTicks(7).cutoffsIntervalNanos(2_000_000).maxRestarts(2).maxServerRpcsPerPeer(99)
                .maxRpcs(1234).maxBufferedBytes(1L << 20).maxBufferedBytesPerPeer(1L << 19)
                .maxOutgoingBytes(1L << 24).idShard(3, 8).fifoSendOrderForTests(true).unscheduledAtLevelZeroForTests(true)
                .fifoGrantOrderForTests(true)
                .build();
    }

    @Test
    void toBuilder_defaults_roundTrip() {
        assertConfigEquals(D, D.toBuilder().build());
    }

    @Test
    void toBuilder_everySettingChanged_roundTrip() {
        EngineConfig c = everythingChanged();
        EngineConfig copy = c.toBuilder().build();
        assertConfigEquals(c, copy);
        assertEquals(5_000_000, copy.maxMessageLength);
        assertEquals(3, copy.idShard);
        assertEquals(8, copy.idShardCount);
        assertTrue(copy.fifoSendOrderForTests);
        assertTrue(copy.unscheduledAtLevelZeroForTests);
    }

    @Test
    void everythingChanged_differsFromDefaultsInEveryField() {
        EngineConfig c = everythingChanged();
        for (Field f : EngineConfig.class.getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers())) {
                continue;
            }
            f.setAccessible(true);
            try {
                Object x = f.get(c);
                Object y = f.get(D);
                boolean same = x instanceof int[] xs ? java.util.Arrays.equals(xs, (int[]) y) : x.equals(y);
                assertFalse(same, "round-trip test does not exercise " + f.getName());
            } catch (IllegalAccessException e) {
                throw new AssertionError(e);
            }
        }
    }

    @Test
    void toBuilder_changesDoNotAffectOriginal() {
        EngineConfig c = D.toBuilder().maxOvercommit(2).unscheduledCutoffs(1, 1, 1, 1, 1, 1, 1, 1).build();
        assertEquals(2, c.maxOvercommit);
        assertEquals(8, D.maxOvercommit);
        assertEquals(200, D.unscheduledCutoffs()[7]);
    }

    @Test
    void cutoffs_arrayPassedToBuilder_isCopied() {
        int[] mine = {0, 0, 0, 0, 1_000_000, 15_000, 2_800, 200};
        EngineConfig.Builder b = EngineConfig.builder().unscheduledCutoffs(mine);
        mine[7] = -5;
        EngineConfig c = b.build();
        assertEquals(200, c.unscheduledCutoffs()[7]);
        mine[6] = 1;
        assertEquals(2_800, c.unscheduledCutoffs()[6]);
    }

    @Test
    void cutoffs_returnedArray_isACopy() {
        int[] got = D.unscheduledCutoffs();
        got[7] = 999;
        assertEquals(200, D.unscheduledCutoffs()[7]);
        assertEquals(200, D.cutoffsShared()[7]);
        assertNotSame(D.unscheduledCutoffs(), D.unscheduledCutoffs());
    }

    @Test
    void cutoffs_builderReusedAfterBuild_doesNotChangeBuiltConfig() {
        EngineConfig.Builder b = EngineConfig.builder();
        EngineConfig first = b.build();
        b.unscheduledCutoffs(9, 9, 9, 9, 9, 9, 9, 9).maxOvercommit(1);
        assertEquals(200, first.unscheduledCutoffs()[7]);
        assertEquals(8, first.maxOvercommit);
        assertEquals(9, b.build().unscheduledCutoffs()[0]);
    }

    @Test
    void toString_mentionsKeyValues() {
        String s = D.toString();
        assertTrue(s.contains("maxIncoming=400000"), s);
        assertTrue(s.contains("[0, 0, 0, 0, 1000000, 15000, 2800, 200]"), s);
    }

    // ------------------------------------------------------------------ validation

    private static void assertRejected(String setting, Consumer<EngineConfig.Builder> change) {
        EngineConfig.Builder b = EngineConfig.builder();
        change.accept(b);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::build);
        assertTrue(e.getMessage() != null && e.getMessage().contains(setting),
                "message does not name " + setting + ": " + e.getMessage());
    }

    private static void assertAccepted(Consumer<EngineConfig.Builder> change) {
        EngineConfig.Builder b = EngineConfig.builder();
        change.accept(b);
        b.build();
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, Integer.MIN_VALUE, Integer.MAX_VALUE - 65_535, Integer.MAX_VALUE})
    void invalid_maxMessageLength(int v) {
        assertRejected("maxMessageLength", b -> b.maxMessageLength(v));
    }

    @Test
    void valid_maxMessageLengthBounds() {
        assertEquals(1, EngineConfig.builder().maxMessageLength(1).build().maxMessageLength);
        assertAccepted(b -> b.maxMessageLength(Integer.MAX_VALUE - 65_536));
    }

    @ParameterizedTest
    @ValueSource(ints = {131, 100, 0, -1, Integer.MIN_VALUE, 65_536, 100_000, Integer.MAX_VALUE})
    void invalid_mtu(int v) {
        assertRejected("mtu", b -> b.mtu(v));
    }

    @Test
    void valid_mtuBounds() {
        assertEquals(64, EngineConfig.builder().mtu(132).build().segmentPayload());
        assertEquals(65_507 - 40, EngineConfig.builder().mtu(65_535).maxIncoming(65_535)
                .maxBufferedBytes(65_535).build().segmentPayload());
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, 129, 1000, Integer.MIN_VALUE, Integer.MAX_VALUE})
    void invalid_ipUdpOverhead(int v) {
        assertRejected("ipUdpOverhead", b -> b.ipUdpOverhead(v));
    }

    @Test
    void invalid_ipUdpOverheadLeavingTooLittleOfMtu_namesMtu() {
        assertRejected("mtu", b -> b.mtu(200).ipUdpOverhead(128));
        assertAccepted(b -> b.mtu(232).ipUdpOverhead(128));
        assertAccepted(b -> b.ipUdpOverhead(0));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, Integer.MIN_VALUE})
    void invalid_unscheduledBytes(int v) {
        assertRejected("unscheduledBytes", b -> b.unscheduledBytes(v));
    }

    @ParameterizedTest
    @ValueSource(ints = {1499, 1, 0, -1, Integer.MIN_VALUE})
    void invalid_maxIncoming(int v) {
        assertRejected("maxIncoming", b -> b.maxIncoming(v));
    }

    @Test
    void valid_maxIncomingOneMtu() {
        assertAccepted(b -> b.maxIncoming(1500));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, 65, Integer.MAX_VALUE})
    void invalid_maxOvercommit(int v) {
        assertRejected("maxOvercommit", b -> b.maxOvercommit(v));
    }

    @Test
    void valid_maxOvercommitBounds() {
        assertAccepted(b -> b.maxOvercommit(1));
        assertAccepted(b -> b.maxOvercommit(64));
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, Integer.MIN_VALUE})
    void invalid_grantWindow(int v) {
        assertRejected("grantWindow", b -> b.grantWindow(v));
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, 501, 1000, Integer.MIN_VALUE})
    void invalid_grantFifoFraction(int v) {
        assertRejected("grantFifoFraction", b -> b.grantFifoFraction(v));
    }

    @Test
    void valid_grantFifoFractionBounds() {
        assertAccepted(b -> b.grantFifoFraction(0));
        assertAccepted(b -> b.grantFifoFraction(500));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, Integer.MIN_VALUE})
    void invalid_fifoGrantIncrement(int v) {
        assertRejected("fifoGrantIncrement", b -> b.fifoGrantIncrement(v));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, 1_001, Integer.MIN_VALUE})
    void invalid_grantBatchSegments(int v) {
        assertRejected("grantBatchSegments", b -> b.grantBatchSegments(v));
    }

    @Test
    void valid_grantBatchSegmentsBounds() {
        assertAccepted(b -> b.grantBatchSegments(1));
        assertAccepted(b -> b.grantBatchSegments(1_000));
    }

    @ParameterizedTest
    @ValueSource(longs = {-1, 1_000_000_001L, Long.MIN_VALUE, Long.MAX_VALUE})
    void invalid_pacerLateCreditNanos(long v) {
        assertRejected("pacerLateCreditNanos", b -> b.pacerLateCreditNanos(v));
    }

    @Test
    void valid_pacerLateCreditNanosBounds() {
        assertAccepted(b -> b.pacerLateCreditNanos(0));
        assertAccepted(b -> b.pacerLateCreditNanos(1_000_000_000L));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 7, 9, 16})
    void invalid_unscheduledCutoffsCount(int n) {
        assertRejected("unscheduledCutoffs", b -> b.unscheduledCutoffs(new int[n]));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3, 4, 5, 6, 7})
    void invalid_unscheduledCutoffsNegativeEntry(int level) {
        int[] c = {0, 0, 0, 0, 1_000_000, 15_000, 2_800, 200};
        c[level] = -1;
        assertRejected("unscheduledCutoffs", b -> b.unscheduledCutoffs(c));
    }

    @Test
    void invalid_unscheduledCutoffsNull() {
        assertRejected("unscheduledCutoffs", b -> b.unscheduledCutoffs((int[]) null));
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, 7, 8, Integer.MAX_VALUE})
    void invalid_maxScheduledPriority(int v) {
        assertRejected("maxScheduledPriority", b -> b.maxScheduledPriority(v).defaultUnscheduledPriority(7));
    }

    @Test
    void valid_maxScheduledPriorityBounds() {
        assertAccepted(b -> b.maxScheduledPriority(0));
        assertAccepted(b -> b.maxScheduledPriority(6).defaultUnscheduledPriority(7));
    }

    @ParameterizedTest
    @ValueSource(ints = {3, 2, 0, -1, 8, 255})
    void invalid_defaultUnscheduledPriority(int v) {
        assertRejected("defaultUnscheduledPriority", b -> b.defaultUnscheduledPriority(v));
    }

    @Test
    void valid_defaultUnscheduledPriorityBounds() {
        assertAccepted(b -> b.defaultUnscheduledPriority(4));
        assertAccepted(b -> b.defaultUnscheduledPriority(7));
    }

    @ParameterizedTest
    @ValueSource(longs = {0, -1, Long.MIN_VALUE})
    void invalid_linkMbps(long v) {
        assertRejected("linkMbps", b -> b.linkMbps(v));
    }

    @ParameterizedTest
    @ValueSource(longs = {-1, Long.MIN_VALUE})
    void invalid_maxNicQueueNanos(long v) {
        assertRejected("maxNicQueueNanos", b -> b.maxNicQueueNanos(v));
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, Integer.MIN_VALUE})
    void invalid_throttleMinBytes(int v) {
        assertRejected("throttleMinBytes", b -> b.throttleMinBytes(v));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, 65, 1000})
    void invalid_maxGsoSegments(int v) {
        assertRejected("maxGsoSegments", b -> b.maxGsoSegments(v));
    }

    @ParameterizedTest
    @ValueSource(longs = {999, 1, 0, -1, Long.MIN_VALUE})
    void invalid_tickNanos(long v) {
        assertRejected("tickNanos", b -> b.tickNanos(v));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, Integer.MIN_VALUE})
    void invalid_resendTicks(int v) {
        assertRejected("resendTicks", b -> b.resendTicks(v));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, Integer.MIN_VALUE})
    void invalid_resendIntervalTicks(int v) {
        assertRejected("resendIntervalTicks", b -> b.resendIntervalTicks(v));
    }

    @ParameterizedTest
    @ValueSource(ints = {5, 4, 0, -1, Integer.MIN_VALUE})
    void invalid_timeoutTicks(int v) {
        assertRejected("timeoutTicks", b -> b.timeoutTicks(v));
    }

    @Test
    void valid_timeoutTicksJustAboveResendTicks() {
        assertAccepted(b -> b.timeoutTicks(6));
        assertRejected("timeoutTicks", b -> b.resendTicks(100));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, Integer.MIN_VALUE})
    void invalid_needAckTicks(int v) {
        assertRejected("needAckTicks", b -> b.needAckTicks(v));
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, Integer.MIN_VALUE})
    void invalid_ackDelayTicks(int v) {
        assertRejected("ackDelayTicks", b -> b.ackDelayTicks(v));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, 101})
    void invalid_timerTrafficPercent(int v) {
        assertRejected("timerTrafficPercent", b -> b.timerTrafficPercent(v));
    }

    @Test
    void ackDelayTicks_zero_accepted() {
        assertAccepted(b -> b.ackDelayTicks(0));
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, Integer.MIN_VALUE})
    void invalid_tombstoneTicks(int v) {
        assertRejected("tombstoneTicks", b -> b.tombstoneTicks(v));
    }

    @ParameterizedTest
    @ValueSource(longs = {-1, Long.MIN_VALUE})
    void invalid_cutoffsIntervalNanos(long v) {
        assertRejected("cutoffsIntervalNanos", b -> b.cutoffsIntervalNanos(v));
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, Integer.MIN_VALUE})
    void invalid_maxRestarts(int v) {
        assertRejected("maxRestarts", b -> b.maxRestarts(v));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, Integer.MIN_VALUE})
    void invalid_maxServerRpcsPerPeer(int v) {
        assertRejected("maxServerRpcsPerPeer", b -> b.maxServerRpcsPerPeer(v));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, Integer.MIN_VALUE})
    void invalid_maxRpcs(int v) {
        assertRejected("maxRpcs", b -> b.maxRpcs(v));
    }

    @ParameterizedTest
    @ValueSource(longs = {1499, 0, -1, Long.MIN_VALUE})
    void invalid_maxBufferedBytes(long v) {
        assertRejected("maxBufferedBytes", b -> b.maxBufferedBytes(v));
    }

    @ParameterizedTest
    @ValueSource(longs = {1499, 0, -1, Long.MIN_VALUE})
    void invalid_maxBufferedBytesPerPeer(long v) {
        assertRejected("maxBufferedBytesPerPeer", b -> b.maxBufferedBytesPerPeer(v));
    }

    @ParameterizedTest
    @ValueSource(longs = {0, -1, Long.MIN_VALUE})
    void invalid_maxOutgoingBytes(long v) {
        assertRejected("maxOutgoingBytes", b -> b.maxOutgoingBytes(v));
    }

    @Test
    void valid_limitsBelowAndAboveOthers() {
        // A per-peer buffer above the engine's is allowed (it then has no effect), and an outgoing
        // limit below maxMessageLength only refuses the messages longer than itself.
        assertAccepted(b -> b.maxBufferedBytes(1500).maxBufferedBytesPerPeer(Long.MAX_VALUE));
        assertAccepted(b -> b.maxOutgoingBytes(1).maxBufferedBytesPerPeer(1500));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, 3, 6, 1000, 2048, Integer.MIN_VALUE})
    void invalid_idShardCount(int count) {
        assertRejected("idShardCount", b -> b.idShard(0, count));
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, 4, 5, Integer.MIN_VALUE, Integer.MAX_VALUE})
    void invalid_idShardIndex(int shard) {
        assertRejected("idShard ", b -> b.idShard(shard, 4));
    }

    @Test
    void valid_idShardBounds() {
        assertAccepted(b -> b.idShard(0, 1));
        assertAccepted(b -> b.idShard(1023, 1024));
        assertAccepted(b -> b.idShard(3, 4));
    }

    @Test
    void valid_zeroBoundsOfNonNegativeSettings() {
        EngineConfig c = EngineConfig.builder().grantWindow(0).maxNicQueueNanos(0).throttleMinBytes(0)
                .tombstoneTicks(0).cutoffsIntervalNanos(0).maxRestarts(0).build();
        assertEquals(0, c.maxRestarts);
        assertAccepted(b -> b.linkMbps(1).fifoGrantIncrement(1).maxGsoSegments(1).tickNanos(1000)
                .resendTicks(1).resendIntervalTicks(1).needAckTicks(1).maxServerRpcsPerPeer(1).maxRpcs(1)
                .maxBufferedBytes(1500).unscheduledBytes(1));
    }

    @Test
    void builder_afterRejection_canBeFixedAndBuilt() {
        EngineConfig.Builder b = EngineConfig.builder().maxOvercommit(0);
        assertThrows(IllegalArgumentException.class, b::build);
        assertEquals(3, b.maxOvercommit(3).build().maxOvercommit);
    }
}
