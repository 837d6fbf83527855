package io.homa.core.psp;

import java.util.Iterator;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a secured socket remembers of the SPIs that reached it, shared by its event loops: each
 * SPI's derived key (derivation costs a few AES blocks, so it is done once) and its
 * {@link ReplayWindow}. An SPI is remembered only once one of its packets authenticated, so an
 * off-path sender cannot fill the table; it holds at most {@value #MAX_SPIS} (about 0.5 KiB
 * each), and when full one is forgotten to make room. A forgotten SPI loses its window: a packet
 * of it replayed after that would be taken once more, which is why the table is large (every
 * event loop of every authenticated peer has one SPI per key). Thread-safe.
 */
public final class PspReceiveState {
    static final int MAX_SPIS = 16_384;

    final PspMasterKeys keys;
    private final ConcurrentHashMap<Integer, Spi> spis = new ConcurrentHashMap<>();

    public PspReceiveState(PspMasterKeys keys) {
        this.keys = keys;
    }

    /** SPIs remembered now. */
    public int spis() {
        return spis.size();
    }

    /** The SPI's state if it is remembered under its slot's current key, else null. */
    Spi known(int spi) {
        Spi s = spis.get(spi);
        return s != null && s.generation == keys.generation(spi >>> 31) ? s : null;
    }

    /** Remembers an SPI whose packet just authenticated (keeps an existing entry of the same key). */
    Spi remember(Spi fresh) {
        if (spis.size() >= MAX_SPIS) {
            Iterator<Integer> it = spis.keySet().iterator();
            if (it.hasNext()) {
                it.next();
                it.remove();
            }
        }
        // Atomic, so that two loops that both saw no (or a stale) entry end up with one window:
        // an entry of the same key wins; one of an older key gives way (a new key, a new IV space).
        return spis.compute(fresh.spi, (spi, before) ->
                before != null && before.generation == fresh.generation ? before : fresh);
    }

    static final class Spi {
        final int spi;
        final javax.crypto.spec.SecretKeySpec key;
        final int generation;
        final ReplayWindow window = new ReplayWindow();

        Spi(int spi, byte[] key, int generation) {
            this.spi = spi;
            this.key = new javax.crypto.spec.SecretKeySpec(key, "AES");
            this.generation = generation;
        }
    }
}
