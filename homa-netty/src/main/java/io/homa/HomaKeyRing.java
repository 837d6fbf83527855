package io.homa;

import io.homa.core.psp.PspFormat;
import io.homa.core.psp.PspKeyDerivation;
import io.homa.core.psp.PspMasterKeys;

import java.security.SecureRandom;

/**
 * The master keys of secured sockets ({@link HomaSecurity}): two slots, of which senders use one,
 * after PSP (the SPI of every packet names the slot whose key it is sealed under). Every host of a
 * deployment holds the same keys in this pre-shared mode; a receiver derives each packet's key
 * from the slot's master key and the packet's SPI, so it keeps no table of peers' keys.
 *
 * <p>Rotation, without a failed call: {@link #install} the new key in the free slot on every host
 * (receivers now accept both), then {@link #sendWith} that slot on every host (senders move to
 * it at their next packet, each with a fresh SPI), and once the old key's packets are gone (a
 * few round trips; wait longer than a call's deadline to be sure retransmissions are done too)
 * {@link #remove} the old slot. A packet under a removed or unknown key is dropped and counted
 * ({@code HomaMetrics.Shell.SECURITY_UNKNOWN_KEY}).
 *
 * <p>Thread-safe: any thread may rotate while sockets run; one ring may serve several sockets.
 * The ring copies the key bytes it is given; the caller should wipe its own copy.
 */
public final class HomaKeyRing {
    /** The AEAD cipher of every packet sealed under a ring. */
    public enum Cipher {
        /** AES-GCM with 128-bit derived keys (PSP version 0). */
        AES_GCM_128(PspFormat.VERSION_GCM_128),
        /** AES-GCM with 256-bit derived keys (PSP version 1). */
        AES_GCM_256(PspFormat.VERSION_GCM_256);

        final int pspVersion;

        Cipher(int pspVersion) {
            this.pspVersion = pspVersion;
        }
    }

    /** Bytes of a master key: 32 (PSP's master keys are 256 bits whatever the cipher). */
    public static final int MASTER_KEY_BYTES = PspKeyDerivation.MASTER_KEY_BYTES;

    private static final SecureRandom RANDOM = new SecureRandom();

    private final PspMasterKeys keys;
    private final Cipher cipher;

    private HomaKeyRing(Cipher cipher, byte[] key) {
        this.cipher = cipher;
        try {
            this.keys = new PspMasterKeys(cipher.pspVersion, key);
        } catch (IllegalArgumentException e) {
            throw new HomaBadArgumentException(e.getMessage(), e);
        }
    }

    /**
     * A ring whose slot 0 holds {@code masterKey} (32 bytes) and is the one senders use.
     *
     * @throws HomaBadArgumentException if {@code cipher} is null or the key is not 32 bytes
     */
    public static HomaKeyRing of(Cipher cipher, byte[] masterKey) {
        if (cipher == null) {
            throw new HomaBadArgumentException("cipher must not be null");
        }
        return new HomaKeyRing(cipher, masterKey);
    }

    /** A fresh random master key (32 bytes from {@link SecureRandom}) for {@link #of} or {@link #install}. */
    public static byte[] newMasterKey() {
        byte[] k = new byte[MASTER_KEY_BYTES];
        RANDOM.nextBytes(k);
        return k;
    }

    /** The cipher of this ring. */
    public Cipher cipher() {
        return cipher;
    }

    /**
     * Puts {@code masterKey} (32 bytes) in {@code slot} (0 or 1), replacing the key there.
     * Replacing the key senders use fails their peers' packets until those hold it too: install in
     * the free slot, as the class comment says.
     *
     * @throws HomaBadArgumentException if the slot is not 0 or 1 or the key is not 32 bytes
     */
    public void install(int slot, byte[] masterKey) {
        try {
            keys.install(slot, masterKey);
        } catch (IllegalArgumentException e) {
            throw new HomaBadArgumentException(e.getMessage(), e);
        }
    }

    /**
     * Seals every packet from now on under {@code slot}'s key.
     *
     * @throws HomaBadArgumentException if the slot is not 0 or 1
     * @throws IllegalStateException    if the slot is empty
     */
    public void sendWith(int slot) {
        try {
            keys.sendWith(slot);
        } catch (IllegalArgumentException e) {
            throw new HomaBadArgumentException(e.getMessage(), e);
        }
    }

    /**
     * Forgets {@code slot}'s key (the ring drops its copy; the garbage collector reclaims it): packets under it are refused from now on.
     *
     * @throws HomaBadArgumentException if the slot is not 0 or 1
     * @throws IllegalStateException    if senders use that slot
     */
    public void remove(int slot) {
        try {
            keys.remove(slot);
        } catch (IllegalArgumentException e) {
            throw new HomaBadArgumentException(e.getMessage(), e);
        }
    }

    /** The slot senders use (0 or 1). */
    public int sendSlot() {
        return keys.sendSlot();
    }

    /** Whether {@code slot} (0 or 1) holds a key. */
    public boolean holds(int slot) {
        try {
            return keys.holds(slot);
        } catch (IllegalArgumentException e) {
            throw new HomaBadArgumentException(e.getMessage(), e);
        }
    }

    PspMasterKeys masterKeys() {
        return keys;
    }

    @Override
    public String toString() {
        return "HomaKeyRing{" + cipher + ", sendSlot=" + keys.sendSlot() + "}"; // never the keys
    }
}
