package io.homa.core.psp;

/**
 * PSP's key derivation: the key of an SPI is AES-CMAC, under the receiver's 256-bit master key,
 * of a 16-byte block (NIST SP 800-108 counter mode): counter (u32), label "Pv0" or "Pv1" (the
 * version), a zero byte, the SPI (u32), the key length in bits (u32: 128 or 256). A 256-bit key is
 * two such blocks, counters 1 and 2. A receiver can thus derive any SPI's key from the packet
 * alone and keeps no table of keys.
 */
public final class PspKeyDerivation {
    /** Bytes of a master key (PSP's are always 256 bits). */
    public static final int MASTER_KEY_BYTES = 32;

    private PspKeyDerivation() {
    }

    /** Bytes of the key {@code version} uses: 16 (AES-GCM-128) or 32 (AES-GCM-256). */
    public static int keyBytes(int version) {
        return switch (version) {
            case PspFormat.VERSION_GCM_128 -> 16;
            case PspFormat.VERSION_GCM_256 -> 32;
            default -> throw new IllegalArgumentException("PSP version must be 0 or 1, was " + version);
        };
    }

    /** The key of {@code spi} for {@code version}, under {@code masterKey} (32 bytes). */
    public static byte[] derive(byte[] masterKey, int spi, int version) {
        if (masterKey.length != MASTER_KEY_BYTES) {
            throw new IllegalArgumentException("a PSP master key has 32 bytes, this one " + masterKey.length);
        }
        int bytes = keyBytes(version);
        byte[] key = new byte[bytes];
        for (int counter = 1; (counter - 1) * 16 < bytes; counter++) {
            byte[] part = AesCmac.mac(masterKey, block(counter, spi, version, bytes * 8));
            System.arraycopy(part, 0, key, (counter - 1) * 16, 16);
        }
        return key;
    }

    /** The derivation block (see the class comment). */
    static byte[] block(int counter, int spi, int version, int bits) {
        byte[] b = new byte[16];
        b[3] = (byte) counter;
        b[4] = 'P';
        b[5] = 'v';
        b[6] = (byte) ('0' + version);
        b[7] = 0;
        b[8] = (byte) (spi >>> 24);
        b[9] = (byte) (spi >>> 16);
        b[10] = (byte) (spi >>> 8);
        b[11] = (byte) spi;
        b[14] = (byte) (bits >>> 8);
        b[15] = (byte) bits;
        return b;
    }
}
