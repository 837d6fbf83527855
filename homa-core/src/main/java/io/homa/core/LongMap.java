package io.homa.core;

import java.util.Arrays;
import java.util.function.Consumer;

/**
 * A map from long keys to objects with open addressing and linear probing: RPC lookups on the
 * packet path without boxing. Not thread-safe. Keys may be any long; null values are not allowed.
 */
final class LongMap<V> {
    private long[] keys;
    private Object[] values;
    private int size;
    private int mask;

    LongMap() {
        this(16);
    }

    LongMap(int capacity) {
        int cap = Integer.highestOneBit(Math.max(4, capacity - 1)) << 1;
        keys = new long[cap];
        values = new Object[cap];
        mask = cap - 1;
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** The spread of {@code key} over a power-of-two table (mask the low bits); also {@link Tombstones}'. */
    static int hash(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }

    @SuppressWarnings("unchecked")
    V get(long key) {
        int i = hash(key) & mask;
        while (true) {
            Object v = values[i];
            if (v == null) {
                return null;
            }
            if (keys[i] == key) {
                return (V) v;
            }
            i = (i + 1) & mask;
        }
    }

    boolean containsKey(long key) {
        return get(key) != null;
    }

    /** Associates {@code value} with {@code key}; returns the previous value or null. */
    @SuppressWarnings("unchecked")
    V put(long key, V value) {
        if (value == null) {
            throw new IllegalArgumentException("null value");
        }
        int i = hash(key) & mask;
        while (true) {
            Object v = values[i];
            if (v == null) {
                keys[i] = key;
                values[i] = value;
                if (++size > (mask + 1) * 3 / 4) {
                    grow();
                }
                return null;
            }
            if (keys[i] == key) {
                values[i] = value;
                return (V) v;
            }
            i = (i + 1) & mask;
        }
    }

    /** Removes {@code key}; returns its value or null. Backward-shift deletion keeps probes short. */
    @SuppressWarnings("unchecked")
    V remove(long key) {
        int i = hash(key) & mask;
        while (true) {
            Object v = values[i];
            if (v == null) {
                return null;
            }
            if (keys[i] == key) {
                shiftBack(i);
                size--;
                return (V) v;
            }
            i = (i + 1) & mask;
        }
    }

    private void shiftBack(int gap) {
        int i = gap;
        while (true) {
            i = (i + 1) & mask;
            Object v = values[i];
            if (v == null) {
                break;
            }
            int home = hash(keys[i]) & mask;
            // Move entry i into the gap if its home is not cyclically within (gap, i].
            if (((i - home) & mask) >= ((i - gap) & mask)) {
                keys[gap] = keys[i];
                values[gap] = v;
                gap = i;
            }
        }
        values[gap] = null;
        keys[gap] = 0;
    }

    private void grow() {
        long[] oldKeys = keys;
        Object[] oldValues = values;
        keys = new long[oldKeys.length * 2];
        values = new Object[oldValues.length * 2];
        mask = keys.length - 1;
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldValues[i] != null) {
                putNew(oldKeys[i], oldValues[i]);
            }
        }
    }

    private void putNew(long key, Object value) {
        int i = hash(key) & mask;
        while (values[i] != null) {
            i = (i + 1) & mask;
        }
        keys[i] = key;
        values[i] = value;
        size++;
    }

    /** Calls {@code action} for every value (do not modify the map meanwhile). */
    @SuppressWarnings("unchecked")
    void forEachValue(Consumer<? super V> action) {
        for (Object v : values) {
            if (v != null) {
                action.accept((V) v);
            }
        }
    }

    /** Removes every entry whose value matches. */
    @SuppressWarnings("unchecked")
    int removeIf(java.util.function.Predicate<? super V> test) {
        int removed = 0;
        // Collect first: removal shifts entries around.
        long[] doomed = null;
        int n = 0;
        for (int i = 0; i < values.length; i++) {
            if (values[i] != null && test.test((V) values[i])) {
                if (doomed == null) {
                    doomed = new long[Math.min(size, 16)];
                } else if (n == doomed.length) {
                    doomed = Arrays.copyOf(doomed, n * 2);
                }
                doomed[n++] = keys[i];
            }
        }
        for (int i = 0; i < n; i++) {
            remove(doomed[i]);
            removed++;
        }
        return removed;
    }

    void clear() {
        Arrays.fill(values, null);
        Arrays.fill(keys, 0);
        size = 0;
    }
}
