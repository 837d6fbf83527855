package io.homa.core.psp;

import javax.crypto.spec.SecretKeySpec;

/**
 * A key a peer gave this host to seal its packets to that peer with (the key exchange's mode): the
 * peer chose the SPI and derived the key from its own master key, so it can derive it again from
 * the SPI alone. Each event loop of the sender gets an SPI of its own, so the IV counter here is
 * one loop's IV space: it starts at 1 and counts one per packet (the peer issues a fresh SPI
 * for every exchange, so a counter never restarts under a key it already used).
 *
 * <p>Used by one event loop only (its IV counter is not synchronized); the key bytes are not kept.
 */
public final class PspSendKey {
    final int spi;
    final SecretKeySpec key;
    long nextIv = 1;

    /**
     * @param spi the SPI the peer issued
     * @param key its derived key (16 or 32 bytes, as the PSP version says; not kept)
     */
    public PspSendKey(int spi, byte[] key) {
        if (key == null || (key.length != 16 && key.length != 32)) {
            throw new IllegalArgumentException("an AES-GCM key has 16 or 32 bytes, was "
                    + (key == null ? "null" : key.length + " bytes"));
        }
        this.spi = spi;
        this.key = new SecretKeySpec(key, "AES");
    }

    /** The SPI packets sealed with this key carry. */
    public int spi() {
        return spi;
    }

    /** The IV the next packet gets. */
    public long nextIv() {
        return nextIv;
    }
}
