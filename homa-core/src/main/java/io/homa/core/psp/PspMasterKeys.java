package io.homa.core.psp;


/**
 * A host's two master-key slots (an SPI's top bit names one) and the slot its senders use: what a
 * rotation changes. Install the new key in the free slot on every host (receivers then accept
 * both), move senders to it ({@link #sendWith}), and once the old key's packets are gone, remove it.
 * In the pre-shared mode every host holds the same keys, so a sender derives its own SPI's key
 * from them. Thread-safe; readers see a change at their next packet ({@link #version()}).
 */
public final class PspMasterKeys {
    /** What readers see, replaced whole by every change (readers take no lock: one volatile read per packet). */
    private record State(byte[] slot0, byte[] slot1, int generation0, int generation1, int sendSlot, int version) {
        byte[] slot(int i) {
            return i == 0 ? slot0 : slot1;
        }

        int generation(int i) {
            return i == 0 ? generation0 : generation1;
        }
    }

    private final int pspVersion;
    private volatile State state = new State(null, null, 0, 0, 0, 0);
    /** By slot: the next SPI {@link #issue} hands out below the key bit (from a random start with each new key). */
    private final int[] nextIssued = new int[2];
    /** By slot: SPIs issued under its current key; at 2^31 - 1 they are spent and the key must change. */
    private final long[] issuedUnderKey = new long[2];

    /**
     * @param pspVersion {@link PspFormat#VERSION_GCM_128} or {@link PspFormat#VERSION_GCM_256}
     * @param key        the master key of slot 0 (32 bytes; copied), which senders use
     */
    public PspMasterKeys(int pspVersion, byte[] key) {
        PspKeyDerivation.keyBytes(pspVersion); // checks the version
        this.pspVersion = pspVersion;
        install(0, key);
    }

    /** The PSP version (cipher) of every packet sealed or accepted with these keys. */
    public int pspVersion() {
        return pspVersion;
    }

    /** Puts {@code key} (32 bytes, copied) in {@code slot} (0 or 1), replacing what was there. */
    public synchronized void install(int slot, byte[] key) {
        checkSlot(slot);
        if (key == null || key.length != PspKeyDerivation.MASTER_KEY_BYTES) {
            throw new IllegalArgumentException("a master key has 32 bytes, was "
                    + (key == null ? "null" : key.length + " bytes"));
        }
        State s = state;
        byte[] k = key.clone();
        state = slot == 0
                ? new State(k, s.slot1, s.generation0 + 1, s.generation1, s.sendSlot, s.version + 1)
                : new State(s.slot0, k, s.generation0, s.generation1 + 1, s.sendSlot, s.version + 1);
        issuedUnderKey[slot] = 0;
    }

    /** Senders seal with {@code slot}'s key from their next packet on (a new SPI each). */
    public synchronized void sendWith(int slot) {
        checkSlot(slot);
        State s = state;
        if (s.slot(slot) == null) {
            throw new IllegalStateException("master key slot " + slot + " is empty: install a key first");
        }
        state = new State(s.slot0, s.slot1, s.generation0, s.generation1, slot, s.version + 1);
    }

    /** Forgets {@code slot}'s key: packets under it are refused from now on. Not the slot senders use. */
    public synchronized void remove(int slot) {
        checkSlot(slot);
        State s = state;
        if (slot == s.sendSlot) {
            throw new IllegalStateException("master key slot " + slot + " is the one senders use: sendWith the other first");
        }
        // The old array is left to the collector, not wiped: a reader may still be deriving from it.
        state = slot == 0
                ? new State(null, s.slot1, s.generation0 + 1, s.generation1, s.sendSlot, s.version + 1)
                : new State(s.slot0, null, s.generation0, s.generation1 + 1, s.sendSlot, s.version + 1);
    }

    /** The slot senders use. */
    public int sendSlot() {
        return state.sendSlot;
    }

    /** Changes with every install, switch and removal. */
    public int version() {
        return state.version;
    }

    /** Whether {@code slot} holds a key. */
    public boolean holds(int slot) {
        checkSlot(slot);
        return state.slot(slot) != null;
    }

    /** The generation of {@code slot}'s key (it changes when the key does), or -1 when the slot is empty. */
    int generation(int slot) {
        State s = state;
        return s.slot(slot) == null ? -1 : s.generation(slot);
    }

    /** The key of {@code spi} under its slot's master key and the slot's generation, or null when the slot is empty. */
    DerivedKey derive(int spi) {
        State s = state;
        int slot = spi >>> 31;
        byte[] master = s.slot(slot);
        if (master == null) {
            return null;
        }
        return new DerivedKey(PspKeyDerivation.derive(master, spi, pspVersion), s.generation(slot));
    }

    /**
     * A fresh SPI (random, never zero below the key bit) in the slot senders use, its key and the
     * {@link #version()} they belong to, taken together (from one state).
     */
    SendKey newSendKey(java.util.Random random) {
        State s = state;
        int spi;
        do {
            spi = (random.nextInt() & ~PspFormat.SPI_KEY_BIT) | (s.sendSlot << 31);
        } while ((spi & ~PspFormat.SPI_KEY_BIT) == 0);
        return new SendKey(spi, PspKeyDerivation.derive(s.slot(s.sendSlot), spi, pspVersion), s.version);
    }

    /**
     * Issues a fresh SPI under the send slot's key and derives its key: for a peer that is to seal
     * its packets to this host (the key exchange's mode, where this host is the receiver and
     * chooses). SPIs are handed out in turn from a random start, so none repeats under one master
     * key, and a peer that comes back (a restart, a new exchange) never gets a key whose IVs it
     * used before.
     *
     * @throws IllegalStateException when the send slot's key has issued every SPI it has (2^31 - 1): rotate
     */
    public synchronized SendKey issue(java.util.Random random) {
        State s = state;
        int slot = s.sendSlot;
        if (issuedUnderKey[slot] == 0) {
            nextIssued[slot] = random.nextInt() & ~PspFormat.SPI_KEY_BIT;
        }
        if (issuedUnderKey[slot] >= (1L << 31) - 1) {
            throw new IllegalStateException("master key slot " + slot + " has issued every SPI: rotate the key");
        }
        int low;
        do {
            low = nextIssued[slot];
            nextIssued[slot] = (low + 1) & ~PspFormat.SPI_KEY_BIT;
        } while (low == 0);
        issuedUnderKey[slot]++;
        int spi = low | (s.sendSlot << 31);
        return new SendKey(spi, PspKeyDerivation.derive(s.slot(s.sendSlot), spi, pspVersion), s.version);
    }

    /** A sent key: its SPI, the derived key and the {@link #version()} it belongs to. */
    public record SendKey(int spi, byte[] key, int version) {
    }

    record DerivedKey(byte[] key, int generation) {
    }

    private static void checkSlot(int slot) {
        if (slot != 0 && slot != 1) {
            throw new IllegalArgumentException("a master key slot is 0 or 1, was " + slot);
        }
    }
}
