package io.homa.core.psp;

import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;

/**
 * Opens sealed Homa packets (see {@link PspFormat}) for one event loop: checks the header, derives
 * (or recalls) the SPI's key from the receiver's master key, verifies the tag over the header, the
 * readable bytes and the ciphertext, decrypts, and refuses a replayed IV. Nothing of a packet is
 * used before its tag verified, and only an authenticated packet changes any state. Its
 * {@link PspReceiveState} is shared with the socket's other loops; this object is confined to
 * its loop.
 */
public final class PspOpener {
    static {
        warmUp();
    }

    private final PspReceiveState state;
    private final Cipher cipher;
    private final byte[] nonce = new byte[12];

    public PspOpener(PspReceiveState state) {
        this(state, null);
    }

    /** An opener whose AES-GCM comes from {@code provider} ({@link PspCipher#aesGcm}; null: the JCA's preference order). */
    public PspOpener(PspReceiveState state, java.security.Provider provider) {
        this.state = state;
        this.cipher = PspCipher.aesGcm(provider);
    }

    /**
     * Seals and opens one packet under a throwaway key, once per JVM, when the first secured socket
     * opens: the JDK's first AES-GCM operation loads and initialises its classes, tens of
     * milliseconds that would otherwise fall on a socket's first call.
     */
    private static void warmUp() {
        PspMasterKeys keys = new PspMasterKeys(PspFormat.VERSION_GCM_128, new byte[PspKeyDerivation.MASTER_KEY_BYTES]);
        ByteBuffer packet = ByteBuffer.allocate(io.homa.core.wire.WireFormat.COMMON_HEADER + 16);
        ByteBuffer sealed = ByteBuffer.allocate(packet.capacity() + PspFormat.OVERHEAD);
        new PspSealer(keys, new java.util.Random(0), () -> 1).seal(packet, 0, packet.capacity(), sealed);
        sealed.flip();
        new PspOpener(new PspReceiveState(keys)).open(sealed, 0, sealed.limit(), ByteBuffer.allocate(sealed.limit()));
    }

    /**
     * Opens the sealed packet {@code in[at, at + length)}: on success writes the Homa packet into
     * {@code out} at its position (which advances by its length) and returns null; else returns
     * why it was refused and leaves {@code out}'s position where it was.
     */
    public PspDrop open(ByteBuffer in, int at, int length, ByteBuffer out) {
        if (!PspFormat.looksSealed(in, at, length)) {
            return PspDrop.NOT_SEALED;
        }
        if (length < PspFormat.OVERHEAD) {
            return PspDrop.BAD_HEADER;
        }
        int flags = in.get(at + PspFormat.OFF_FLAGS) & 0xFF;
        int ext = (in.get(at + PspFormat.OFF_EXT_LENGTH) & 0xFF) * 8;
        int clear = (in.get(at + PspFormat.OFF_CRYPT_OFFSET) & 0x3F) * 4;
        int homaAt = at + PspFormat.HEADER + ext;
        int homaLength = length - PspFormat.OVERHEAD - ext;
        if ((flags & 0x01) == 0 || (flags & 0xC2) != 0 || PspFormat.version(flags) != state.keys.pspVersion()
                || (in.get(at + PspFormat.OFF_CRYPT_OFFSET) & 0xC0) != 0 || homaLength < 0 || clear > homaLength
                || out.remaining() < homaLength) {
            return PspDrop.BAD_HEADER; // S, D and V unset: no virtualization cookie, no sampling, in this version
        }
        int spi = in.getInt(at + PspFormat.OFF_SPI);
        long iv = in.getLong(at + PspFormat.OFF_IV);
        PspReceiveState.Spi known = state.known(spi);
        PspReceiveState.Spi s = known;
        if (s == null) {
            PspMasterKeys.DerivedKey k = state.keys.derive(spi);
            if (k == null) {
                return PspDrop.UNKNOWN_KEY;
            }
            s = new PspReceiveState.Spi(spi, k.key(), k.generation());
        }
        if (!s.window.mayAccept(iv)) {
            return PspDrop.REPLAY;
        }
        int p = out.position();
        PspSealer.nonceOf(spi, iv, nonce);
        int inPosition = in.position();
        int inLimit = in.limit();
        try {
            cipher.init(Cipher.DECRYPT_MODE, s.key, new GCMParameterSpec(128, nonce));
            in.limit(homaAt + clear).position(at);
            cipher.updateAAD(in); // the header and the readable bytes; leaves in where the ciphertext starts
            out.put(p, in, homaAt, clear);
            out.position(p + clear);
            in.limit(at + length);
            cipher.doFinal(in, out);
        } catch (AEADBadTagException e) {
            out.position(p);
            return PspDrop.AUTH_FAILED;
        } catch (GeneralSecurityException | IllegalArgumentException | IllegalStateException e) {
            out.position(p);
            return PspDrop.AUTH_FAILED; // the cipher refused the input: it cannot be authentic either
        } finally {
            in.limit(inLimit).position(inPosition); // the caller's view is as it was
        }
        if (known == null) {
            s = state.remember(s);
        }
        if (!s.window.accept(iv)) {
            out.position(p);
            return PspDrop.REPLAY; // a copy of it got here first, on another loop
        }
        return null;
    }
}
