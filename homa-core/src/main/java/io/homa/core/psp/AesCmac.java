package io.homa.core.psp;

import javax.crypto.Cipher;
import javax.crypto.spec.SecretKeySpec;
import java.security.GeneralSecurityException;

/**
 * AES-CMAC (NIST SP 800-38B, RFC 4493) on the JDK's AES, for PSP's key derivation. The JDK has
 * no CMAC; derivation runs once per SPI (a receiver caches the key), so a few block encryptions
 * through {@code AES/ECB/NoPadding} cost nothing that matters, and no cryptographic library joins
 * the dependencies. Checked against the standard's vectors and against Bouncy Castle (tests).
 */
final class AesCmac {
    private static final int BLOCK = 16;

    private AesCmac() {
    }

    /** CMAC of {@code message} under {@code key} (16, 24 or 32 bytes): 16 bytes. */
    static byte[] mac(byte[] key, byte[] message) {
        try {
            Cipher aes = Cipher.getInstance("AES/ECB/NoPadding");
            aes.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"));
            byte[] l = aes.doFinal(new byte[BLOCK]);
            byte[] k1 = doubled(l);
            byte[] k2 = doubled(k1);
            int n = Math.max(1, (message.length + BLOCK - 1) / BLOCK);
            boolean complete = message.length > 0 && message.length % BLOCK == 0;
            byte[] x = new byte[BLOCK];
            byte[] y = new byte[BLOCK];
            for (int i = 0; i < n - 1; i++) {
                for (int j = 0; j < BLOCK; j++) {
                    y[j] = (byte) (x[j] ^ message[i * BLOCK + j]);
                }
                x = aes.doFinal(y);
            }
            byte[] last = new byte[BLOCK];
            int start = (n - 1) * BLOCK;
            int rest = message.length - start;
            System.arraycopy(message, start, last, 0, rest);
            byte[] sub = complete ? k1 : k2;
            if (!complete) {
                last[rest] = (byte) 0x80; // padding: one bit, then zeros
            }
            for (int j = 0; j < BLOCK; j++) {
                y[j] = (byte) (x[j] ^ last[j] ^ sub[j]);
            }
            return aes.doFinal(y);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK's AES is missing", e);
        }
    }

    /** The subkey step: shift left one bit, and xor 0x87 into the last byte if a one fell off. */
    private static byte[] doubled(byte[] b) {
        byte[] out = new byte[BLOCK];
        int carry = 0;
        for (int i = BLOCK - 1; i >= 0; i--) {
            int v = b[i] & 0xFF;
            out[i] = (byte) ((v << 1) | carry);
            carry = v >>> 7;
        }
        if (carry != 0) {
            out[BLOCK - 1] ^= (byte) 0x87;
        }
        return out;
    }
}
