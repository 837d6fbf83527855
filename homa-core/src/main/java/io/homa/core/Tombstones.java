package io.homa.core;

/**
 * The client ids of one peer's recently finished server RPCs, each until the tick it expires: a
 * request packet for one of them is a late duplicate that must not run again. Looked up by id
 * and expired in the order they were added (a ring of id and expiry pairs), so a timer tick
 * costs what expires in it, not a scan of every id kept: at 200,000 calls a second and 20 ticks
 * of memory a busy peer keeps thousands. Expiries are added almost in order (the tick plus a
 * round-trip-based span that changes slowly); one that comes earlier than the one before it
 * waits for that one, so an id is kept a little longer, never forgotten early.
 *
 * <p>The lookup table is its own: open addressing with linear probing over one {@code long}
 * array of id and expiry pairs, so that a probe reads one cache line and no boxed expiry (a
 * busy server checks every new request against it, and adds and expires one id per call; in a
 * {@link LongMap} of boxed expiries these came to about 6% of such a server's CPU).
 */
final class Tombstones {
    /** Marks a free slot of {@link #table} in its expiry's place: no tick is this early. */
    private static final long FREE = Long.MIN_VALUE;

    /** Id at 2i, expiry at 2i + 1 ({@link #FREE}: no entry), i the slot. */
    private long[] table = newTable(4);
    private int size;
    /** Slots - 1 (slots: a power of two). */
    private int mask = 3;
    /** Ids and expiries in the order added: id at 2i, expiry at 2i + 1, from {@link #head}. */
    private long[] ring = new long[8];
    private int head;
    private int count;

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    boolean contains(long clientId) {
        return slotOf(clientId) >= 0;
    }

    /** Remembers {@code clientId} until {@code expiry} (a later add of the same id replaces it). */
    void add(long clientId, long expiry) {
        put(clientId, expiry);
        if (2 * count == ring.length) {
            growRing();
        }
        int at = 2 * ((head + count) & (ring.length / 2 - 1));
        ring[at] = clientId;
        ring[at + 1] = expiry;
        count++;
    }

    /** Forgets every id whose expiry is at or before {@code tick}, oldest first. */
    void expire(long tick) {
        while (count > 0) {
            int at = 2 * head;
            if (ring[at + 1] > tick) {
                return;
            }
            int slot = slotOf(ring[at]);
            if (slot >= 0 && table[2 * slot + 1] <= tick) { // an id added again later keeps its later expiry
                removeSlot(slot);
            }
            head = (head + 1) & (ring.length / 2 - 1);
            count--;
        }
    }

    private static long[] newTable(int slots) {
        long[] t = new long[2 * slots];
        for (int i = 1; i < t.length; i += 2) {
            t[i] = FREE;
        }
        return t;
    }

    private int home(long id) {
        return LongMap.hash(id) & mask;
    }

    /** The slot holding {@code id}, or -1. */
    private int slotOf(long id) {
        for (int i = home(id); ; i = (i + 1) & mask) {
            long expiry = table[2 * i + 1];
            if (expiry == FREE) {
                return -1;
            }
            if (table[2 * i] == id) {
                return i;
            }
        }
    }

    private void put(long id, long expiry) {
        for (int i = home(id); ; i = (i + 1) & mask) {
            if (table[2 * i + 1] == FREE) {
                table[2 * i] = id;
                table[2 * i + 1] = expiry;
                if (++size > (mask + 1) * 3 / 4) {
                    growTable();
                }
                return;
            }
            if (table[2 * i] == id) {
                table[2 * i + 1] = expiry;
                return;
            }
        }
    }

    /** Empties {@code gap}, shifting back the entries after it that it would cut off from their home (no tombstone markers). */
    private void removeSlot(int gap) {
        size--;
        for (int i = (gap + 1) & mask; table[2 * i + 1] != FREE; i = (i + 1) & mask) {
            // Entry i moves into the gap unless its home lies cyclically within (gap, i].
            if (((i - home(table[2 * i])) & mask) >= ((i - gap) & mask)) {
                table[2 * gap] = table[2 * i];
                table[2 * gap + 1] = table[2 * i + 1];
                gap = i;
            }
        }
        table[2 * gap + 1] = FREE;
    }

    private void growTable() {
        long[] old = table;
        table = newTable(old.length); // twice the slots: old.length of them
        mask = old.length - 1;
        for (int i = 0; i < old.length; i += 2) {
            if (old[i + 1] != FREE) {
                int s = home(old[i]);
                while (table[2 * s + 1] != FREE) {
                    s = (s + 1) & mask;
                }
                table[2 * s] = old[i];
                table[2 * s + 1] = old[i + 1];
            }
        }
    }

    private void growRing() {
        long[] bigger = new long[ring.length * 2];
        int pairs = ring.length / 2;
        for (int i = 0; i < count; i++) {
            int from = 2 * ((head + i) & (pairs - 1));
            bigger[2 * i] = ring[from];
            bigger[2 * i + 1] = ring[from + 1];
        }
        ring = bigger;
        head = 0;
    }
}
