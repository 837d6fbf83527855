package io.homa;

import io.homa.core.EngineConfig;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Protocol settings HomaConfig derives from the bind address and the link rate. */
class HomaConfigDefaultsTest {
    private static final EngineConfig D = EngineConfig.defaults();
    private static final InetSocketAddress WILDCARD = new InetSocketAddress(0);

    private static HomaConfig.Builder onEthernet() {
        return HomaConfig.builder().bindAddress(WILDCARD); // wildcard: MTU 1,500
    }

    @Test
    void defaultLink_keepsDatacenterSizes() {
        EngineConfig e = onEthernet().build().protocol();
        assertEquals(D.unscheduledBytes, e.unscheduledBytes);
        assertEquals(D.maxIncoming, e.maxIncoming);
    }

    @Test
    void slowLink_scalesUnscheduledAndBudget_toSegmentFloors() {
        EngineConfig e = onEthernet().linkMbps(10).build().protocol();
        assertEquals(1500, e.mtu);
        assertEquals(e.segmentPayload(), e.unscheduledBytes, "one segment, not 40,000 bytes");
        assertEquals(10 * e.segmentPayload(), e.maxIncoming);
    }

    @Test
    void slowLink_pacerAllowsHalfAMillisecondInTheNic() {
        EngineConfig e = onEthernet().linkMbps(100).build().protocol();
        assertEquals(500_000, e.maxNicQueueNanos, "about four 1,500-byte packets at 100 Mbit/s");
        assertEquals(500_000, onEthernet().linkMbps(10).build().protocol().maxNicQueueNanos);
        assertEquals(D.maxNicQueueNanos, onEthernet().build().protocol().maxNicQueueNanos);
    }

    @Test
    void wholeProtocolGiven_nothingDerived() {
        EngineConfig mine = EngineConfig.builder().linkMbps(10).build();
        EngineConfig e = onEthernet().protocol(mine).linkMbps(10).build().protocol();
        assertEquals(mine.unscheduledBytes, e.unscheduledBytes);
        assertEquals(mine.maxIncoming, e.maxIncoming);
        assertEquals(mine.maxNicQueueNanos, e.maxNicQueueNanos);
    }

    @Test
    void slowerLink_scalesInProportion() {
        EngineConfig e = onEthernet().linkMbps(2_500).build().protocol();
        assertEquals(D.unscheduledBytes / 10, e.unscheduledBytes);
        assertEquals(D.maxIncoming / 10, e.maxIncoming);
    }

    @Test
    void fasterLink_keepsDefaults() {
        EngineConfig e = onEthernet().linkMbps(100_000).build().protocol();
        assertEquals(D.unscheduledBytes, e.unscheduledBytes);
        assertEquals(D.maxIncoming, e.maxIncoming);
    }

    @Test
    void explicitSettings_win() {
        EngineConfig e = onEthernet().linkMbps(10).unscheduledBytes(5_000).build().protocol();
        assertEquals(5_000, e.unscheduledBytes);
        assertEquals(10 * e.segmentPayload(), e.maxIncoming, "the budget, not chosen, still follows the link");
        EngineConfig f = onEthernet().linkMbps(10).maxIncoming(50_000).build().protocol();
        assertEquals(50_000, f.maxIncoming);
        assertEquals(f.segmentPayload(), f.unscheduledBytes);
    }
}
