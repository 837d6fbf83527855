package io.homa.core.psp;

import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;
import org.bouncycastle.crypto.engines.AESEngine;
import org.bouncycastle.crypto.modes.GCMModeCipher;
import org.bouncycastle.crypto.modes.GCMBlockCipher;
import org.bouncycastle.crypto.params.AEADParameters;
import org.bouncycastle.crypto.params.KeyParameter;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Sealing and opening Homa packets, deterministic (seeded keys and payloads): the key derivation
 * and the AES-GCM seal checked against an independent computation (Bouncy Castle's CMac and GCM
 * over the inputs PSP's specification defines, built here byte by byte), a changed byte anywhere
 * refused, replays, wrong and retired keys, plaintext, and a rotation.
 */
class PspPacketsTest {
    private static final SplittableRandom RANDOM = new SplittableRandom(1337);

    private static byte[] key(long seed) {
        byte[] k = new byte[32];
        new SplittableRandom(seed).nextBytes(k);
        return k;
    }

    /** A DATA packet of {@code payload} bytes, as the engine writes it (the fields only need to be readable). */
    static ByteBuffer dataPacket(int payload) {
        ByteBuffer b = ByteBuffer.allocate(WireFormat.DATA_HEADER + payload);
        b.putShort(WireFormat.OFF_MAGIC, (short) WireFormat.MAGIC);
        b.put(WireFormat.OFF_VERSION, (byte) WireFormat.VERSION);
        b.put(WireFormat.OFF_TYPE, (byte) PacketType.DATA.code);
        b.putLong(WireFormat.OFF_SENDER_ID, 42);
        b.putInt(WireFormat.DATA_OFF_MESSAGE_LENGTH, payload);
        b.putShort(WireFormat.DATA_OFF_SEGMENT_LENGTH, (short) payload);
        for (int i = 0; i < payload; i++) {
            b.put(WireFormat.DATA_HEADER + i, (byte) RANDOM.nextInt());
        }
        return b;
    }

    static ByteBuffer grantPacket() {
        ByteBuffer b = ByteBuffer.allocate(WireFormat.GRANT_LENGTH);
        b.putShort(WireFormat.OFF_MAGIC, (short) WireFormat.MAGIC);
        b.put(WireFormat.OFF_VERSION, (byte) WireFormat.VERSION);
        b.put(WireFormat.OFF_TYPE, (byte) PacketType.GRANT.code);
        b.putLong(WireFormat.OFF_SENDER_ID, 43);
        b.putInt(WireFormat.GRANT_OFF_OFFSET, 123_456);
        b.put(WireFormat.GRANT_OFF_PRIORITY, (byte) 5);
        return b;
    }

    private static ByteBuffer seal(PspSealer sealer, ByteBuffer packet) {
        ByteBuffer out = ByteBuffer.allocate(packet.capacity() + PspFormat.OVERHEAD);
        sealer.seal(packet, 0, packet.capacity(), out);
        assertEquals(out.capacity(), out.position());
        return out.flip();
    }

    private static ByteBuffer open(PspOpener opener, ByteBuffer sealed, PspDrop expected) {
        ByteBuffer out = ByteBuffer.allocate(sealed.remaining());
        PspDrop d = opener.open(sealed, sealed.position(), sealed.remaining(), out);
        assertEquals(expected, d);
        return out.flip();
    }

    @Test
    void derivationIsPspsCmacOverTheSpecifiedBlock() {
        byte[] master = key(1);
        for (int spi : new int[] {1, 0x12345678, 0x80000001, 0xFFFFFFFF}) {
            // Built independently of PspKeyDerivation.block: {counter, "Pv0", 0, SPI, 0x80}.
            byte[] b128 = {0, 0, 0, 1, 0x50, 0x76, 0x30, 0,
                    (byte) (spi >>> 24), (byte) (spi >>> 16), (byte) (spi >>> 8), (byte) spi, 0, 0, 0, (byte) 0x80};
            assertArrayEquals(AesCmacTest.bouncyCastle(master, b128), PspKeyDerivation.derive(master, spi, 0));
            byte[] b256a = {0, 0, 0, 1, 0x50, 0x76, 0x31, 0,
                    (byte) (spi >>> 24), (byte) (spi >>> 16), (byte) (spi >>> 8), (byte) spi, 0, 0, 1, 0};
            byte[] b256b = b256a.clone();
            b256b[3] = 2;
            byte[] expected = new byte[32];
            System.arraycopy(AesCmacTest.bouncyCastle(master, b256a), 0, expected, 0, 16);
            System.arraycopy(AesCmacTest.bouncyCastle(master, b256b), 0, expected, 16, 16);
            assertArrayEquals(expected, PspKeyDerivation.derive(master, spi, 1));
        }
        assertThrows(IllegalArgumentException.class, () -> PspKeyDerivation.derive(new byte[16], 1, 0));
        assertThrows(IllegalArgumentException.class, () -> PspKeyDerivation.derive(master, 1, 2));
    }

    @Test
    void sealedPacketIsPspGcmAsAnIndependentImplementationComputesIt() throws Exception {
        for (int version : new int[] {0, 1}) {
            PspMasterKeys keys = new PspMasterKeys(version, key(2));
            PspSealer sealer = new PspSealer(keys);
            ByteBuffer packet = dataPacket(1000);
            ByteBuffer sealed = seal(sealer, packet);
            byte[] s = new byte[sealed.remaining()];
            sealed.duplicate().get(s);
            assertEquals(PspFormat.NEXT_HEADER_HOMA, s[0] & 0xFF);
            assertEquals(0, s[1]);
            assertEquals(WireFormat.DATA_HEADER / 4, s[2]);
            assertEquals(version << 2 | 1, s[3]);
            int spi = ByteBuffer.wrap(s, 4, 4).getInt();
            assertEquals(sealer.spi(), spi);
            // The readable Homa header, unchanged:
            assertArrayEquals(Arrays.copyOf(packet.array(), WireFormat.DATA_HEADER), Arrays.copyOfRange(s, 16, 56));
            // Bouncy Castle's GCM with the key derived by its CMac, nonce SPI||IV, AAD = PSP header + readable bytes.
            byte[] derived = PspKeyDerivation.derive(key(2), spi, version);
            GCMModeCipher gcm = GCMBlockCipher.newInstance(AESEngine.newInstance());
            gcm.init(false, new AEADParameters(new KeyParameter(derived), 128, Arrays.copyOfRange(s, 4, 16),
                    Arrays.copyOfRange(s, 0, 56)));
            byte[] plain = new byte[gcm.getOutputSize(s.length - 56)];
            int n = gcm.processBytes(s, 56, s.length - 56, plain, 0);
            n += gcm.doFinal(plain, n); // throws if the tag does not verify
            assertArrayEquals(Arrays.copyOfRange(packet.array(), 40, 1040), Arrays.copyOf(plain, n));
            // And ours opens it to the same packet.
            ByteBuffer opened = open(new PspOpener(new PspReceiveState(keys)), sealed, null);
            assertEquals(packet.rewind(), opened);
        }
    }

    @Test
    void aChangedByteAnywhereIsRefused() {
        PspMasterKeys keys = new PspMasterKeys(0, key(3));
        PspSealer sealer = new PspSealer(keys);
        for (ByteBuffer packet : new ByteBuffer[] {dataPacket(200), grantPacket()}) {
            ByteBuffer sealed = seal(sealer, packet);
            Map<PspDrop, Integer> reasons = new EnumMap<>(PspDrop.class);
            for (int offset = 0; offset < sealed.limit(); offset++) {
                for (int bit : new int[] {0x01, 0x80}) {
                    ByteBuffer t = ByteBuffer.allocate(sealed.limit());
                    t.put(sealed.duplicate()).flip();
                    t.put(offset, (byte) (t.get(offset) ^ bit));
                    PspOpener opener = new PspOpener(new PspReceiveState(keys)); // no replay state: only the change counts
                    PspDrop d = opener.open(t, 0, t.limit(), ByteBuffer.allocate(t.limit()));
                    assertNotNull(d, "a change of bit " + bit + " at offset " + offset + " of " + packet.capacity()
                            + "-byte packet passed");
                    reasons.merge(d, 1, Integer::sum);
                }
            }
            // The tag covers the header, the readable part, the ciphertext and itself:
            assertTrue(reasons.getOrDefault(PspDrop.AUTH_FAILED, 0) >= 2 * (sealed.limit() - 16), reasons.toString());
            // ...and the untouched packet still opens.
            open(new PspOpener(new PspReceiveState(keys)), sealed, null);
        }
    }

    @Test
    void replaysAreRefusedReorderingInsideTheWindowIsNot() {
        PspMasterKeys keys = new PspMasterKeys(0, key(4));
        PspSealer sealer = new PspSealer(keys);
        PspOpener opener = new PspOpener(new PspReceiveState(keys));
        ByteBuffer[] sealed = new ByteBuffer[ReplayWindow.BITS + 10];
        for (int i = 0; i < sealed.length; i++) {
            sealed[i] = seal(sealer, grantPacket());
        }
        open(opener, sealed[5].duplicate(), null);
        open(opener, sealed[5].duplicate(), PspDrop.REPLAY);
        open(opener, sealed[3].duplicate(), null); // older, inside the window
        open(opener, sealed[3].duplicate(), PspDrop.REPLAY);
        open(opener, sealed[sealed.length - 1].duplicate(), null); // slides the window past 0..9
        open(opener, sealed[4].duplicate(), PspDrop.REPLAY); // below the window now
        open(opener, sealed[20].duplicate(), null);
        open(opener, sealed[20].duplicate(), PspDrop.REPLAY);
    }

    @Test
    void aHugeJumpOfTheIvClearsTheWindowAtOnce() {
        ReplayWindow w = new ReplayWindow();
        assertTrue(w.accept(5));
        long far = 5 + (1L << 63) + 7; // negative as a signed long: the slide must be unsigned
        assertTrue(w.accept(far));
        assertTrue(!w.accept(5) && !w.accept(far), "the old IV is below the window, the new one seen");
        assertTrue(w.accept(far - 1));
    }

    @Test
    void wrongKeyPlaintextAndRetiredKeysAreRefused() {
        PspMasterKeys ours = new PspMasterKeys(0, key(5));
        PspMasterKeys theirs = new PspMasterKeys(0, key(6));
        PspOpener opener = new PspOpener(new PspReceiveState(ours));
        open(opener, seal(new PspSealer(theirs), grantPacket()), PspDrop.AUTH_FAILED);
        open(opener, seal(new PspSealer(new PspMasterKeys(1, key(5))), grantPacket()), PspDrop.BAD_HEADER); // GCM-256 here
        open(opener, grantPacket(), PspDrop.NOT_SEALED);
        open(opener, ByteBuffer.allocate(0), PspDrop.NOT_SEALED);
        ByteBuffer shortOne = ByteBuffer.allocate(20);
        shortOne.put(0, (byte) PspFormat.NEXT_HEADER_HOMA);
        open(opener, shortOne, PspDrop.BAD_HEADER);
        // A sender under slot 1, which this side does not hold:
        PspMasterKeys rotated = new PspMasterKeys(0, key(5));
        rotated.install(1, key(7));
        rotated.sendWith(1);
        open(opener, seal(new PspSealer(rotated), grantPacket()), PspDrop.UNKNOWN_KEY);
    }

    /**
     * The key exchange's mode: the receiver issues SPIs (none repeated under one master key, each
     * under its send slot) and their keys; a packet sealed with an issued key opens at the issuer
     * only, IVs count from 1 per key, and a key issued under a replaced master key no longer opens.
     */
    @Test
    void issuedKeysSealForTheIssuerAlone() {
        PspMasterKeys receiver = new PspMasterKeys(0, key(20));
        PspMasterKeys other = new PspMasterKeys(0, key(21));
        java.util.Random random = new java.util.Random(3);
        java.util.Set<Integer> spis = new java.util.HashSet<>();
        for (int i = 0; i < 10_000; i++) {
            PspMasterKeys.SendKey k = receiver.issue(random);
            assertTrue(spis.add(k.spi()), "SPI issued twice: " + k.spi());
            assertEquals(0, k.spi() >>> 31);
            assertNotEquals(0, k.spi() & ~PspFormat.SPI_KEY_BIT);
            assertArrayEquals(PspKeyDerivation.derive(key(20), k.spi(), 0), k.key());
        }
        PspMasterKeys.SendKey issued = receiver.issue(random);
        PspSendKey sendKey = new PspSendKey(issued.spi(), issued.key());
        PspSealer sealer = new PspSealer();
        ByteBuffer out = ByteBuffer.allocate(WireFormat.DATA_HEADER + 100 + PspFormat.OVERHEAD);
        ByteBuffer packet = dataPacket(100);
        sealer.seal(sendKey, 0, packet, 0, packet.capacity(), out);
        assertEquals(2, sendKey.nextIv(), "IVs count from 1");
        ByteBuffer sealed = out.flip();
        assertEquals(issued.spi(), sealed.getInt(PspFormat.OFF_SPI));
        assertEquals(1, sealed.getLong(PspFormat.OFF_IV));
        open(new PspOpener(new PspReceiveState(other)), sealed.duplicate(), PspDrop.AUTH_FAILED);
        ByteBuffer opened = open(new PspOpener(new PspReceiveState(receiver)), sealed.duplicate(), null);
        assertEquals(packet.rewind(), opened);
        // The issuer rotates twice: the first master key is gone, and so is everything issued under it.
        receiver.install(1, key(22));
        receiver.sendWith(1);
        assertEquals(1, receiver.issue(random).spi() >>> 31, "issued under the new send slot");
        receiver.install(0, key(23));
        open(new PspOpener(new PspReceiveState(receiver)), sealed.duplicate(), PspDrop.AUTH_FAILED);
        assertThrows(IllegalArgumentException.class, () -> new PspSendKey(1, new byte[15]));
        assertThrows(IllegalStateException.class, () -> sealer.seal(packet, 0, packet.capacity(), out.clear()),
                "a sealer of issued keys has no key of its own");
    }

    @Test
    void rotationMovesSendersToANewSpiUnderTheOtherSlot() {
        PspMasterKeys sender = new PspMasterKeys(0, key(8));
        PspMasterKeys receiver = new PspMasterKeys(0, key(8));
        PspSealer sealer = new PspSealer(sender);
        PspOpener opener = new PspOpener(new PspReceiveState(receiver));
        ByteBuffer before = seal(sealer, dataPacket(10));
        int oldSpi = sealer.spi();
        assertEquals(0, oldSpi >>> 31);
        receiver.install(1, key(9));
        sender.install(1, key(9));
        sender.sendWith(1);
        ByteBuffer after = seal(sealer, dataPacket(10));
        assertNotEquals(oldSpi, sealer.spi());
        assertEquals(1, sealer.spi() >>> 31);
        open(opener, before, null); // both slots accepted during the change
        open(opener, after, null);
        receiver.sendWith(1);
        receiver.remove(0);
        open(opener, seal(new PspSealer(new PspMasterKeys(0, key(8))), grantPacket()), PspDrop.UNKNOWN_KEY);
        assertThrows(IllegalStateException.class, () -> receiver.remove(1));
        assertThrows(IllegalStateException.class, () -> receiver.sendWith(0));
    }

    @Test
    void coalescedSealedPacketsAreWalkedByTheirReadableHeaders() {
        PspMasterKeys keys = new PspMasterKeys(0, key(10));
        PspSealer sealer = new PspSealer(keys);
        ByteBuffer all = ByteBuffer.allocate(3 * (1040 + 32) + (540 + 32));
        for (int i = 0; i < 3; i++) {
            sealer.seal(dataPacket(1000), 0, 1040, all);
        }
        sealer.seal(dataPacket(500), 0, 540, all);
        all.flip();
        int at = 0;
        PspOpener opener = new PspOpener(new PspReceiveState(keys));
        int n = 0;
        ByteBuffer out = ByteBuffer.allocate(all.limit());
        while (at < all.limit()) {
            int len = PspFormat.sealedLength(all, at, all.limit() - at);
            assertEquals(n < 3 ? 1072 : 572, len);
            assertNull(opener.open(all, at, len, out));
            at += len;
            n++;
        }
        assertEquals(4, n);
        assertEquals(3 * 1040 + 540, out.position());
    }
}
