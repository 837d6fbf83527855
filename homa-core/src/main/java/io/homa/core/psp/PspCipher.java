package io.homa.core.psp;

import javax.crypto.Cipher;
import java.security.GeneralSecurityException;
import java.security.Provider;

/**
 * Where the packets' AES-GCM comes from: a JCA provider the socket was given, or else the JCA's
 * own order of preference ({@code Cipher.getInstance} without a provider, which honours a provider
 * installed first, such as Amazon Corretto Crypto Provider after its {@code install()}). Every
 * provider seals the same bytes (AES-GCM is a standard), so peers need not agree on one.
 */
public final class PspCipher {
    /** The transformation of every packet: PSP's AES-GCM with a 16-byte tag, no padding. */
    public static final String TRANSFORMATION = "AES/GCM/NoPadding";

    private PspCipher() {
    }

    /**
     * A new AES-GCM cipher from {@code provider}, or from the JCA's preference order when it is
     * null.
     *
     * @throws IllegalStateException if the provider (or the JDK) has no AES-GCM
     */
    public static Cipher aesGcm(Provider provider) {
        try {
            return provider == null ? Cipher.getInstance(TRANSFORMATION) : Cipher.getInstance(TRANSFORMATION, provider);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException((provider == null ? "the JDK" : "provider " + provider.getName())
                    + " has no " + TRANSFORMATION, e);
        }
    }
}
