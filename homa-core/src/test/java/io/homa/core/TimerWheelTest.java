package io.homa.core;

import io.homa.core.wire.PacketType;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

import static io.homa.core.EnginePair.CFG;
import static io.homa.core.EnginePair.TICK;
import static io.homa.core.EnginePair.bytes;
import static org.junit.jupiter.api.Assertions.*;

/** The timer's schedule ({@link TimerWheel}): who a tick visits, in which order. */
class TimerWheelTest {
    private static Rpc[] rpcs(TimerWheel w, int n) {
        Rpc[] r = new Rpc[n];
        for (int i = 0; i < n; i++) {
            r[i] = new Rpc(2L * i, new Peer(new InetSocketAddress("127.0.0.1", 9000 + i)), true);
            w.add(r[i]);
        }
        return r;
    }

    /** The awake list a tick walks, checking its links both ways. */
    private static List<Rpc> awake(Rpc oldest) {
        List<Rpc> out = new ArrayList<>();
        Rpc last = null;
        for (Rpc r = oldest; r != null; r = r.next) {
            assertEquals(last, r.prev, "links agree");
            out.add(r);
            last = r;
        }
        return out;
    }

    @Test
    void parkedRpcs_leaveTheAwakeList_andComeBackInAgeOrder() {
        TimerWheel w = new TimerWheel();
        Rpc[] r = rpcs(w, 6);
        w.park(r[0]);
        w.park(r[2]);
        w.park(r[4]);
        assertEquals(List.of(r[1], r[3], r[5]), awake(w.oldestAwake()));
        w.wake(r[4]);
        w.wake(r[0]);
        assertEquals(List.of(r[1], r[3], r[5]), awake(w.oldestAwake()), "back only at the next tick");
        assertEquals(List.of(r[0], r[1], r[3], r[4], r[5]), awake(w.startTick(1)), "each at its age's place");
        w.remove(r[2]); // parked when it ends
        w.park(r[5]);
        w.wake(r[5]);
        w.remove(r[5]); // ended while waking
        assertEquals(List.of(r[0], r[1], r[3], r[4]), awake(w.startTick(2)));
        w.wake(r[1]); // awake already: stays where it is
        assertEquals(List.of(r[0], r[1], r[3], r[4]), awake(w.startTick(3)));
    }

    /**
     * An ended RPC is handed back for reuse exactly once, and only when the wheel no longer refers
     * to it: at once from the awake list, a wheel slot or parking; from the heap of woken RPCs
     * only when the next tick drops it from there (reused before, the heap would hold a live RPC
     * under a stale place).
     */
    @Test
    void endedRpcs_areReleasedOnce_andAWakingOneOnlyAtTheNextTick() {
        List<Rpc> released = new ArrayList<>();
        TimerWheel w = new TimerWheel(released::add);
        Rpc[] r = rpcs(w, 5);
        w.remove(r[0]); // awake
        assertEquals(List.of(r[0]), released);
        w.sleep(r[1], 10);
        w.remove(r[1]); // asleep in a slot
        w.park(r[2]);
        w.remove(r[2]); // parked
        assertEquals(List.of(r[0], r[1], r[2]), released);
        w.park(r[3]);
        w.wake(r[3]);
        w.remove(r[3]); // waking: still in the heap
        w.remove(r[3]); // a second end changes nothing
        assertEquals(List.of(r[0], r[1], r[2]), released, "not while the heap holds it");
        assertEquals(List.of(r[4]), awake(w.startTick(1)));
        assertEquals(List.of(r[0], r[1], r[2], r[3]), released, "the tick dropped it from the heap");
        w.startTick(2);
        assertEquals(4, released.size(), "released once");
    }

    @Test
    void sleepingRpcs_areVisitedFromTheirTickOn_inAgeOrder() {
        TimerWheel w = new TimerWheel();
        Rpc[] r = rpcs(w, 4);
        w.sleep(r[3], 5);
        w.sleep(r[0], 5);
        w.sleep(r[1], 7);
        assertEquals(3, w.asleep());
        for (long tick = 1; tick < 5; tick++) {
            assertEquals(List.of(r[2]), awake(w.startTick(tick)), "tick " + tick);
        }
        assertEquals(List.of(r[0], r[2], r[3]), awake(w.startTick(5)));
        assertEquals(List.of(r[0], r[2], r[3]), awake(w.startTick(6)), "awake until put to sleep again");
        assertEquals(List.of(r[0], r[1], r[2], r[3]), awake(w.startTick(7)));
        assertEquals(0, w.asleep());
    }

    @Test
    void wakingEarly_removing_andSleepingBeyondOneRevolution() {
        TimerWheel w = new TimerWheel();
        Rpc[] r = rpcs(w, 3);
        w.sleep(r[0], 100);
        w.sleep(r[1], 100);
        w.sleep(r[2], 10 + TimerWheel.SLOTS); // same slot as tick 10, one revolution later
        w.wake(r[1]); // a packet arrived
        assertEquals(List.of(r[1]), awake(w.startTick(1)));
        w.remove(r[0]); // ended while asleep
        assertEquals(1, w.asleep());
        assertEquals(List.of(r[1]), awake(w.startTick(10)), "not due on the first pass of its slot");
        assertEquals(List.of(r[1]), awake(w.startTick(100)), "the ended one is gone");
        assertEquals(List.of(r[1], r[2]), awake(w.startTick(10 + TimerWheel.SLOTS)));
    }

    @Test
    void clientsWaitingForResponses_sleepBetweenTheirAsks_andAskOnTheSameTicksAsBefore() {
        EnginePair p = new EnginePair(CFG);
        int n = 50;
        for (int i = 0; i < n; i++) {
            p.a.startRequest(p.now, new InetSocketAddress("127.0.0.1", 20_000 + i), bytes(100));
        }
        p.drain(p.a);
        p.advance(TICK, pk -> false);
        assertEquals(n, p.a.sleepingRpcs(), "after one look, each sleeps until its first RESEND is due");
        List<Long> resendTicks = new ArrayList<>();
        for (int t = 0; t < 3 * CFG.timeoutTicks / 4; t++) {
            int before = p.sent(p.addrA, PacketType.RESEND).size();
            p.advance(TICK, pk -> false);
            int after = p.sent(p.addrA, PacketType.RESEND).size();
            if (after > before) {
                resendTicks.add(p.a.counter(Counter.TICKS));
                assertEquals(n, after - before, "every silent RPC asks on the same tick, one per peer");
            }
            assertEquals(n, p.a.sleepingRpcs(), "after every tick (asking or not) every RPC sleeps until its next ask");
        }
        // Silence of resendTicks, then the backoff: resendIntervalTicks, doubled, capped at the
        // keep-alive interval (timeoutTicks / 10).
        long first = CFG.resendTicks;
        List<Long> expected = new ArrayList<>();
        long interval = CFG.resendIntervalTicks;
        for (long t = first; t <= 3 * CFG.timeoutTicks / 4; t += interval) {
            expected.add(t);
            if (t > first) {
                interval = Math.min(2 * interval, CFG.timeoutTicks / 10);
            }
        }
        assertEquals(expected, resendTicks);
    }
}
