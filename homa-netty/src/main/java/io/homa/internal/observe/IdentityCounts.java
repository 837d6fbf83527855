package io.homa.internal.observe;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Requests a secured socket received, by the verified identity of their client (for
 * {@code HomaMetrics.requestsByPeerIdentity()}). At most {@value #MAX_IDENTITIES} identities
 * are told apart (an identity is a certificate subject or a configured name, so a deployment has
 * a handful); requests of any further one count under {@value #OTHER}. Thread-safe.
 * Internal use only.
 */
public final class IdentityCounts {
    public static final int MAX_IDENTITIES = 1_024;
    public static final String OTHER = "(other)";

    private final ConcurrentHashMap<String, LongAdder> counts = new ConcurrentHashMap<>();

    /** One request of {@code identity} (null: none, not counted). */
    public void count(String identity) {
        if (identity == null) {
            return;
        }
        LongAdder a = counts.get(identity);
        if (a == null) {
            a = counts.size() >= MAX_IDENTITIES ? counts.computeIfAbsent(OTHER, k -> new LongAdder())
                    : counts.computeIfAbsent(identity, k -> new LongAdder());
        }
        a.increment();
    }

    /** The counts now, by identity in order. */
    public Map<String, Long> snapshot() {
        Map<String, Long> m = new TreeMap<>();
        counts.forEach((k, v) -> m.put(k, v.sum()));
        return m;
    }
}
