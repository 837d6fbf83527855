package io.homa.core;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.*;

class LongMapTest {
    @Test
    void putGetRemove_basics() {
        LongMap<String> m = new LongMap<>();
        assertNull(m.get(5));
        assertNull(m.put(5, "a"));
        assertEquals("a", m.put(5, "b"));
        assertEquals("b", m.get(5));
        assertEquals(1, m.size());
        assertEquals("b", m.remove(5));
        assertNull(m.remove(5));
        assertTrue(m.isEmpty());
    }

    @Test
    void zeroAndNegativeKeys_work() {
        LongMap<String> m = new LongMap<>();
        m.put(0, "zero");
        m.put(-1, "minus");
        m.put(Long.MIN_VALUE, "min");
        assertEquals("zero", m.get(0));
        assertEquals("minus", m.get(-1));
        assertEquals("min", m.get(Long.MIN_VALUE));
    }

    @Test
    void nullValue_rejected() {
        assertThrows(IllegalArgumentException.class, () -> new LongMap<String>().put(1, null));
    }

    @Test
    void grows_andRemoveIf() {
        LongMap<Long> m = new LongMap<>(4);
        for (long i = 0; i < 10_000; i++) {
            m.put(i * 2, i);
        }
        assertEquals(10_000, m.size());
        assertEquals(5_000, m.removeIf(v -> v % 2 == 0));
        for (long i = 0; i < 10_000; i++) {
            assertEquals(i % 2 == 0 ? null : (Long) i, m.get(i * 2));
        }
    }

    /** Random operation sequences agree with HashMap (clustered keys stress the backward shift). */
    @Property(tries = 300)
    void behavesLikeHashMap(@ForAll @Size(max = 400) List<@IntRange(min = 0, max = 63) Integer> ops,
                            @ForAll long salt) {
        LongMap<Long> m = new LongMap<>(4);
        Map<Long, Long> model = new HashMap<>();
        for (int op : ops) {
            long key = (op >> 1) * 1024L + salt;
            if ((op & 1) == 0) {
                assertEquals(model.put(key, (long) op), m.put(key, (long) op));
            } else {
                assertEquals(model.remove(key), m.remove(key));
            }
            assertEquals(model.size(), m.size());
        }
        for (Map.Entry<Long, Long> e : model.entrySet()) {
            assertEquals(e.getValue(), m.get(e.getKey()));
        }
        long[] count = {0};
        m.forEachValue(v -> count[0]++);
        assertEquals(model.size(), count[0]);
    }
}
