package io.homa.core.psp;

import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;

/**
 * Seals outgoing Homa packets (see {@link PspFormat}) for one event loop. The loop has an SPI of
 * its own, so its IVs are an IV space of their own: a counter that starts at a random 62-bit
 * value when the SPI is chosen and counts one per packet. A new SPI (31 random bits) is drawn on
 * every start and every key change; a nonce (SPI and IV) repeats under one key only if two
 * sealers drew the same SPI and overlapping IV ranges, which at 2^62 possible starts does not
 * happen in practice. (A start taken from the clock, as the first version did, made every sealer
 * that picked an SPI in the same millisecond start at the same IV: a fleet-wide key change.) In
 * the pre-shared mode the key is derived here from the shared master key ({@link PspMasterKeys});
 * a receiver derives the same from the SPI. In the key exchange's mode the receiver chose the SPI
 * and sent its key ({@link PspSendKey}, one per sending loop and so one IV space per loop).
 *
 * <p>Confined to its loop (a caller's turn holds the loop's lock); not thread-safe.
 */
public final class PspSealer {
    private static final SecureRandom RANDOM = new SecureRandom();

    private final PspMasterKeys keys;
    private final java.util.Random random;
    private final java.util.function.LongSupplier ivStart;
    private final Cipher cipher;
    private final byte[] nonce = new byte[12];
    private int keysVersion = Integer.MIN_VALUE;
    /** The key of the pre-shared mode: this loop's own SPI, derived from the shared master key. */
    private PspSendKey own;

    /**
     * A sealer as a socket has it: SPIs and each SPI's first IV from {@link SecureRandom} (the IV
     * a random 62-bit start, so that counters never wrap and two sealers that drew the same SPI
     * under one key would also have to draw overlapping IV ranges to reuse a nonce).
     */
    public PspSealer(PspMasterKeys keys) {
        this(keys, RANDOM, () -> 1 + (RANDOM.nextLong() >>> 2));
    }

    /**
     * A sealer whose SPIs come from {@code random} and whose IV counters start at {@code ivStart}
     * (read at every new SPI): the simulated network's, seeded so that runs repeat.
     */
    public PspSealer(PspMasterKeys keys, java.util.Random random, java.util.function.LongSupplier ivStart) {
        this(keys, random, ivStart, null);
    }

    /**
     * The same, with AES-GCM from {@code provider} ({@link PspCipher#aesGcm}; null: the JCA's
     * preference order).
     */
    public PspSealer(PspMasterKeys keys, java.util.Random random, java.util.function.LongSupplier ivStart,
                     java.security.Provider provider) {
        this.keys = java.util.Objects.requireNonNull(keys, "keys");
        this.random = random;
        this.ivStart = ivStart;
        this.cipher = PspCipher.aesGcm(provider);
    }

    /** A socket's sealer ({@link #PspSealer(PspMasterKeys)}) with AES-GCM from {@code provider} (null: the JCA's order). */
    public static PspSealer withProvider(PspMasterKeys keys, java.security.Provider provider) {
        return new PspSealer(keys, RANDOM, () -> 1 + (RANDOM.nextLong() >>> 2), provider);
    }

    /**
     * A sealer of the key exchange's mode: every packet is sealed with the {@link PspSendKey} its
     * peer gave ({@link #seal(PspSendKey, ByteBuffer, int, int, ByteBuffer)}).
     */
    public PspSealer() {
        this((java.security.Provider) null);
    }

    /** The same, with AES-GCM from {@code provider} (null: the JCA's preference order). */
    public PspSealer(java.security.Provider provider) {
        this.keys = null;
        this.random = null;
        this.ivStart = null;
        this.cipher = PspCipher.aesGcm(provider);
    }

    /** The SPI the next packet is sealed under (for tests and stats; the pre-shared mode). */
    public int spi() {
        refresh();
        return own.spi;
    }

    /**
     * Seals the Homa packet {@code packet[at, at + length)} into {@code out} at its position,
     * which advances by {@code length + PspFormat.OVERHEAD}; {@code packet}'s position and limit
     * are as they were afterwards. The cipher reads and writes the buffers themselves (their
     * bounds set around each step): no views are made per packet.
     */
    public void seal(ByteBuffer packet, int at, int length, ByteBuffer out) {
        refresh();
        seal(own, keys.pspVersion(), packet, at, length, out);
    }

    /**
     * Seals as {@link #seal(ByteBuffer, int, int, ByteBuffer)} does, with {@code k} (a key a peer
     * issued; its IV counter advances) under PSP version {@code pspVersion}.
     */
    public void seal(PspSendKey k, int pspVersion, ByteBuffer packet, int at, int length, ByteBuffer out) {
        int clear = PspFormat.clearLength(packet, at, length);
        int spi = k.spi;
        SecretKeySpec key = k.key;
        long thisIv = k.nextIv++;
        int p = out.position();
        int outLimit = out.limit();
        out.put(p + PspFormat.OFF_NEXT_HEADER, (byte) PspFormat.NEXT_HEADER_HOMA);
        out.put(p + PspFormat.OFF_EXT_LENGTH, (byte) 0);
        out.put(p + PspFormat.OFF_CRYPT_OFFSET, (byte) (clear / 4));
        out.put(p + PspFormat.OFF_FLAGS, (byte) PspFormat.flagsByte(pspVersion));
        out.putInt(p + PspFormat.OFF_SPI, spi);
        out.putLong(p + PspFormat.OFF_IV, thisIv);
        out.put(p + PspFormat.HEADER, packet, at, clear);
        nonceOf(spi, thisIv, nonce);
        int packetPosition = packet.position();
        int packetLimit = packet.limit();
        try {
            cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(128, nonce));
            out.limit(p + PspFormat.HEADER + clear).position(p);
            cipher.updateAAD(out); // the PSP header and the readable bytes; leaves out where the ciphertext starts
            out.limit(outLimit);
            packet.limit(at + length).position(at + clear);
            cipher.doFinal(packet, out);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM failed to seal a packet", e);
        } finally {
            out.limit(outLimit);
            packet.limit(packetLimit).position(packetPosition);
        }
    }

    /** Takes a new SPI and key when the master keys changed (or on the first packet). */
    private void refresh() {
        if (keys == null) {
            throw new IllegalStateException("this sealer seals with the keys its peers issued: seal(PspSendKey, ...)");
        }
        if (keys.version() == keysVersion) {
            return;
        }
        PspMasterKeys.SendKey k = keys.newSendKey(random);
        own = new PspSendKey(k.spi(), k.key());
        own.nextIv = ivStart.getAsLong();
        keysVersion = k.version();
    }

    static void nonceOf(int spi, long iv, byte[] nonce) {
        nonce[0] = (byte) (spi >>> 24);
        nonce[1] = (byte) (spi >>> 16);
        nonce[2] = (byte) (spi >>> 8);
        nonce[3] = (byte) spi;
        for (int i = 0; i < 8; i++) {
            nonce[4 + i] = (byte) (iv >>> (56 - 8 * i));
        }
    }
}
