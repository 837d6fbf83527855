package io.homa.core.sim;

import io.homa.core.Counter;
import io.homa.core.EngineConfig;
import io.homa.core.wire.WireFormat;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Late wake-ups on the simulated network: every timer of both hosts fires 200 us after the
 * deadline its engine asked for, as on a busy machine. One 8 MB request crosses an idle 10 Gbit/s
 * path. With the pacer's late credit (the default, 0.5 ms) the link stays at least 90% busy over
 * the message; without it (0) every late wake-up leaves the link idle, and it is busy well under
 * half the time. Two cases: a message only the pacer's wake-ups drive (all of it unscheduled, so
 * no GRANT wakes the sender), and the default configuration (GRANTs wake it too).
 */
class PacerLateWakeUpScenarioTest {
    private static final int BIG = 8_000_000;
    private static final long LINK_BITS = 10_000_000_000L;
    private static final long LATE = 200_000;

    record Run(double linkBusy, long wakeUps, long lateNanos, long holds) {
    }

    private static Run run(long seed, long creditNanos, boolean timerDriven) {
        SimNetwork.Settings s = new SimNetwork.Settings();
        s.linkBitsPerSecond = LINK_BITS;
        s.linkLatencyNanos = 2_000;
        SimNetwork net = new SimNetwork(seed, s);
        EngineConfig.Builder b = EngineConfig.builder().linkMbps(LINK_BITS / 1_000_000).pacerLateCreditNanos(creditNanos);
        if (timerDriven) {
            b.unscheduledBytes(BIG);
        }
        EngineConfig cfg = b.build();
        SimHost client = net.addHost(cfg);
        SimHost server = net.addHost(cfg);
        client.lateTimers(LATE);
        server.lateTimers(LATE);
        RpcLedger ledger = new RpcLedger(net).responseLength(len -> 0);
        ledger.attach(client);
        ledger.attach(server);
        RpcLedger.Call call = ledger.call(client, server, new byte[BIG]);
        assertTrue(net.runUntilIdle(100_000_000_000L));
        ledger.assertAllExactlyOnce();
        long packets = (BIG + cfg.segmentPayload() - 1) / cfg.segmentPayload();
        long wireBytes = BIG + packets * (WireFormat.DATA_HEADER + cfg.ipUdpOverhead);
        double busy = wireBytes * 8e9 / LINK_BITS / call.rttNanos();
        return new Run(busy, client.engine().counter(Counter.PACER_WAKEUPS),
                client.engine().counter(Counter.PACER_WAKEUP_LATE_NANOS), client.engine().counter(Counter.PACER_HOLDS));
    }

    private static void check(boolean timerDriven) {
        Seeds.run(5L, seed -> {
            Run credit = run(seed, EngineConfig.defaults().pacerLateCreditNanos, timerDriven);
            Run none = run(seed, 0, timerDriven);
            String figures = "with credit " + credit + ", without " + none;
            assertTrue(credit.linkBusy() >= 0.90, "the link idled for late wake-ups: " + figures);
            assertTrue(credit.wakeUps() > 0, "wake-ups counted: " + figures);
            if (timerDriven) {
                // a wake-up may ride on an earlier, already late timer: on average at least half as late
                assertTrue(credit.lateNanos() >= LATE / 2 * credit.wakeUps(), "late wake-ups: " + figures);
            }
            assertTrue(none.linkBusy() < 0.5, "without credit the link should idle: " + figures);
        });
    }

    @Test
    void wakeUps200usLate_messageDrivenByThePacerAlone_linkStaysBusy() {
        check(true);
    }

    @Test
    void wakeUps200usLate_defaultConfiguration_linkStaysBusy() {
        check(false);
    }
}
