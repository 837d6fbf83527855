package io.homa.core.psp;

import org.bouncycastle.crypto.engines.AESEngine;
import org.bouncycastle.crypto.macs.CMac;
import org.bouncycastle.crypto.params.KeyParameter;
import org.junit.jupiter.api.Test;

import java.util.HexFormat;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

/**
 * AES-CMAC against the published vectors (RFC 4493 for AES-128, NIST SP 800-38B's examples for
 * AES-256) and against Bouncy Castle's CMac, an independent implementation, for random keys and
 * messages of every length around the block boundaries.
 */
class AesCmacTest {
    private static final HexFormat HEX = HexFormat.of();
    private static final String MESSAGE = "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
            + "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710";

    @Test
    void rfc4493Aes128Vectors() {
        byte[] key = HEX.parseHex("2b7e151628aed2a6abf7158809cf4f3c");
        check(key, 0, "bb1d6929e95937287fa37d129b756746");
        check(key, 16, "070a16b46b4d4144f79bdd9dd04a287c");
        check(key, 40, "dfa66747de9ae63030ca32611497c827");
        check(key, 64, "51f0bebf7e3b9d92fc49741779363cfe");
    }

    @Test
    void sp800_38bAes256Vectors() {
        byte[] key = HEX.parseHex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4");
        check(key, 0, "028962f61b7bf89efc6b551f4667d983");
        check(key, 16, "28a7023f452e8f82bd4bf28d8c37c35c");
        check(key, 40, "aaf3d8f1de5640c232f5b169b9c911e6");
        check(key, 64, "e1992190549f6ed5696a2c056c315410");
    }

    @Test
    void agreesWithBouncyCastle() {
        SplittableRandom random = new SplittableRandom(4493);
        for (int keyBytes : new int[] {16, 32}) {
            for (int length = 0; length <= 70; length++) {
                byte[] key = new byte[keyBytes];
                byte[] message = new byte[length];
                random.nextBytes(key);
                random.nextBytes(message);
                assertArrayEquals(bouncyCastle(key, message), AesCmac.mac(key, message),
                        keyBytes + "-byte key, " + length + "-byte message");
            }
        }
    }

    static byte[] bouncyCastle(byte[] key, byte[] message) {
        CMac mac = new CMac(AESEngine.newInstance());
        mac.init(new KeyParameter(key));
        mac.update(message, 0, message.length);
        byte[] out = new byte[16];
        mac.doFinal(out, 0);
        return out;
    }

    private static void check(byte[] key, int length, String expected) {
        byte[] m = java.util.Arrays.copyOf(HEX.parseHex(MESSAGE), length);
        assertArrayEquals(HEX.parseHex(expected), AesCmac.mac(key, m), length + "-byte message");
    }
}
