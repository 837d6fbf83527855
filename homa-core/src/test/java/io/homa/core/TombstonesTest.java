package io.homa.core;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link Tombstones}: ids expire at their tick, in the order added, through the ring's growth and wrap-around. */
class TombstonesTest {
    @Test
    void idsExpireAtTheirTickAndNotBefore() {
        Tombstones t = new Tombstones();
        t.add(1, 10L);
        t.add(2, 10L);
        t.add(3, 12L);
        t.expire(9);
        assertTrue(t.contains(1) && t.contains(2) && t.contains(3));
        t.expire(10);
        assertFalse(t.contains(1));
        assertFalse(t.contains(2));
        assertTrue(t.contains(3));
        assertEquals(1, t.size());
        t.expire(12);
        assertTrue(t.isEmpty());
    }

    /** An expiry earlier than the one before it waits for that one: kept longer, never dropped early. */
    @Test
    void anEarlierExpiryBehindALaterOneIsKeptUntilThatOne() {
        Tombstones t = new Tombstones();
        t.add(1, 20L);
        t.add(2, 15L);
        t.expire(16);
        assertTrue(t.contains(2), "kept past its own expiry while an older one is not due");
        t.expire(20);
        assertTrue(t.isEmpty());
    }

    /** An id added again keeps its later expiry when its first entry comes due. */
    @Test
    void anIdAddedAgainKeepsTheLaterExpiry() {
        Tombstones t = new Tombstones();
        t.add(7, 5L);
        t.add(7, 9L);
        t.expire(5);
        assertTrue(t.contains(7));
        t.expire(9);
        assertFalse(t.contains(7));
    }

    /** Many ids over many ticks (the ring grows and wraps): the same ids as a plain scan would keep. */
    @Test
    void matchesAScanOverManyTicks() {
        Tombstones t = new Tombstones();
        Map<Long, Long> model = new HashMap<>();
        SplittableRandom random = new SplittableRandom(27);
        long id = 0;
        for (long tick = 0; tick < 2_000; tick++) {
            int n = random.nextInt(50);
            for (int i = 0; i < n; i++) {
                long expiry = tick + 20;
                t.add(++id, expiry);
                model.put(id, expiry);
            }
            t.expire(tick);
            long now = tick;
            model.values().removeIf(e -> e <= now);
            assertEquals(model.size(), t.size(), "at tick " + tick);
        }
        for (long k : model.keySet()) {
            assertTrue(t.contains(k));
        }
    }

    /**
     * Ids from a small range (so ids come back, and probe runs cluster and shift back on removal),
     * of any sign, with spans that put expiries out of order: every id is known exactly while
     * its latest expiry (or a later one ahead of it in the ring) has not passed, and the table
     * never forgets one early nor keeps one it need not.
     */
    @Test
    void matchesAModelWithRecurringIdsAndExpiriesOutOfOrder() {
        Tombstones t = new Tombstones();
        Map<Long, Long> latest = new HashMap<>();
        SplittableRandom random = new SplittableRandom(65);
        java.util.ArrayDeque<long[]> ring = new java.util.ArrayDeque<>();
        for (long tick = 0; tick < 3_000; tick++) {
            int n = random.nextInt(40);
            for (int i = 0; i < n; i++) {
                long id = random.nextLong(-300, 300) * 0x1_0000_0001L; // spread and signed, few distinct
                long expiry = tick + 1 + random.nextInt(30);
                t.add(id, expiry);
                latest.put(id, expiry);
                ring.add(new long[] {id, expiry});
            }
            t.expire(tick);
            while (!ring.isEmpty() && ring.peek()[1] <= tick) {
                long[] e = ring.poll();
                if (latest.containsKey(e[0]) && latest.get(e[0]) <= tick) {
                    latest.remove(e[0]);
                }
            }
            assertEquals(latest.size(), t.size(), "at tick " + tick);
            for (long k = -300; k < 300; k++) {
                long id = k * 0x1_0000_0001L;
                assertEquals(latest.containsKey(id), t.contains(id), "id " + id + " at tick " + tick);
            }
        }
    }
}
