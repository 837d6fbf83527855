package io.homa.core;

/**
 * The client ids of one peer's recently finished server RPCs, each until the tick it expires: a
 * request packet for one of them is a late duplicate that must not run again. Looked up by id (a
 * {@link LongMap}) and expired in the order they were added (a ring of id and expiry pairs), so a
 * timer tick costs what expires in it, not a scan of every id kept: at 200,000 calls a second and
 * 20 ticks of memory a busy peer keeps thousands. Expiries are added almost in order (the tick
 * plus a round-trip-based span that changes slowly); one that comes earlier than the one before
 * it waits for that one, so an id is kept a little longer, never forgotten early.
 */
final class Tombstones {
    /** Expiry tick by client id (the values of one tick share one box, see RpcTable). */
    private final LongMap<Long> byId = new LongMap<>(4);
    /** Ids and expiries in the order added: id at 2i, expiry at 2i + 1, from {@link #head}. */
    private long[] ring = new long[8];
    private int head;
    private int count;

    int size() {
        return byId.size();
    }

    boolean isEmpty() {
        return byId.isEmpty();
    }

    boolean contains(long clientId) {
        return byId.containsKey(clientId);
    }

    /** Remembers {@code clientId} until {@code expiry} (boxed by the caller, shared among ids). */
    void add(long clientId, Long expiry) {
        byId.put(clientId, expiry);
        if (2 * count == ring.length) {
            grow();
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
            long id = ring[at];
            Long kept = byId.get(id);
            if (kept != null && kept <= tick) { // an id added again later keeps its later expiry
                byId.remove(id);
            }
            head = (head + 1) & (ring.length / 2 - 1);
            count--;
        }
    }

    private void grow() {
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
