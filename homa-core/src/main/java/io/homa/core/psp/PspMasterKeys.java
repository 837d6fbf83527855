package io.homa.core.psp;

import java.util.Arrays;

/**
 * A host's two master-key slots (an SPI's top bit names one) and the slot its senders use: what a
 * rotation changes. Install the new key in the free slot on every host (receivers then accept
 * both), move senders to it ({@link #sendWith}), and once the old key's packets are gone, remove it.
 * In the pre-shared mode every host holds the same keys, so a sender derives its own SPI's key
 * from them. Thread-safe; readers see a change at their next packet ({@link #version()}).
 */
public final class PspMasterKeys {
    private final int pspVersion;
    private final byte[][] slots = new byte[2][];
    private final int[] generations = new int[2];
    private volatile int sendSlot;
    private volatile int version;

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
        slots[slot] = key.clone();
        generations[slot]++;
        version++;
    }

    /** Senders seal with {@code slot}'s key from their next packet on (a new SPI each). */
    public synchronized void sendWith(int slot) {
        checkSlot(slot);
        if (slots[slot] == null) {
            throw new IllegalStateException("master key slot " + slot + " is empty: install a key first");
        }
        sendSlot = slot;
        version++;
    }

    /** Forgets {@code slot}'s key: packets under it are refused from now on. Not the slot senders use. */
    public synchronized void remove(int slot) {
        checkSlot(slot);
        if (slot == sendSlot) {
            throw new IllegalStateException("master key slot " + slot + " is the one senders use: sendWith the other first");
        }
        if (slots[slot] != null) {
            Arrays.fill(slots[slot], (byte) 0);
        }
        slots[slot] = null;
        generations[slot]++;
        version++;
    }

    /** The slot senders use. */
    public int sendSlot() {
        return sendSlot;
    }

    /** Changes with every install, switch and removal. */
    public int version() {
        return version;
    }

    /** Whether {@code slot} holds a key. */
    public synchronized boolean holds(int slot) {
        checkSlot(slot);
        return slots[slot] != null;
    }

    /** The generation of {@code slot}'s key (it changes when the key does), or -1 when the slot is empty. */
    synchronized int generation(int slot) {
        return slots[slot] == null ? -1 : generations[slot];
    }

    /** The key of {@code spi} under its slot's master key and the slot's generation, or null when the slot is empty. */
    synchronized DerivedKey derive(int spi) {
        int slot = spi >>> 31;
        if (slots[slot] == null) {
            return null;
        }
        return new DerivedKey(PspKeyDerivation.derive(slots[slot], spi, pspVersion), generations[slot]);
    }

    /**
     * A fresh SPI (random, never zero below the key bit) in the slot senders use, its key and the
     * {@link #version()} they belong to, taken together.
     */
    synchronized SendKey newSendKey(java.util.Random random) {
        int spi;
        do {
            spi = (random.nextInt() & ~PspFormat.SPI_KEY_BIT) | (sendSlot << 31);
        } while ((spi & ~PspFormat.SPI_KEY_BIT) == 0);
        return new SendKey(spi, PspKeyDerivation.derive(slots[sendSlot], spi, pspVersion), version);
    }

    record SendKey(int spi, byte[] key, int version) {
    }

    record DerivedKey(byte[] key, int generation) {
    }

    private static void checkSlot(int slot) {
        if (slot != 0 && slot != 1) {
            throw new IllegalArgumentException("a master key slot is 0 or 1, was " + slot);
        }
    }
}
