package io.homa;

import javax.net.ssl.KeyManager;
import javax.net.ssl.TrustManager;
import java.time.Duration;

/**
 * Encryption and authentication of every datagram, for {@link HomaConfig.Builder#security}: each
 * Homa packet is sealed as PSP seals a transport packet (a 16-byte header, AES-GCM over the
 * payload and the body of control packets, a 16-byte tag over all of it, the Homa header left
 * readable but authenticated; docs/security.md and docs/wire-format.md). A secured socket drops
 * and counts every datagram that does not authenticate (plaintext, a wrong key, a changed byte, a
 * replay): no handler runs and no reply is sent for one, and a secured client ignores control
 * packets that do not authenticate, so an off-path sender can neither call a handler nor fail or
 * slow a call. A secured and a plain socket do not talk to each other: each drops the other's
 * datagrams with a counted reason ({@code HomaMetrics.Shell.SECURITY_NOT_SEALED} on the secured
 * side, the engine's {@code SEALED} drop on the plain one), and the call times out.
 *
 * <p>Two ways to get keys:
 * <ul>
 *   <li>{@link #mutualTls}: each socket has master keys of its own, made at random when it opens.
 *       Before the first call to a peer the two sockets run a TLS 1.3 handshake with client
 *       certificates (the JDK's {@code SSLEngine} with the given key and trust managers) over TCP
 *       on the socket's port number, and each, as a receiver, issues the other one SPI per event
 *       loop and sends its derived key inside TLS. A peer whose certificate is not trusted gets
 *       no keys: the call fails with {@link HomaAuthenticationException}. The peer's identity is
 *       its certificate's subject. The master keys rotate by themselves
 *       ({@link #rotateEvery}).</li>
 *   <li>{@link #preSharedKeys}: every host holds the same {@link HomaKeyRing}, for closed
 *       deployments and tests; no handshake, and all that is proven of a peer is that it holds
 *       the key.</li>
 * </ul>
 * Costs: 32 bytes per datagram (segments shrink by that much to fit the MTU), and the payload is
 * copied once by the cipher, also with {@link HomaConfig.Builder#zeroCopySend}. With
 * {@link HomaConfig.Builder#tcpFallback}, a mutual-TLS socket's fallback calls run over TLS 1.3
 * connections verified both ways on the same port (handlers see the same identity); pre-shared
 * keys have no TLS, so that combination is refused rather than send the fallback's frames in
 * plaintext.
 *
 * <p>Immutable and thread-safe (a pre-shared key ring is itself thread-safe and shared, so
 * rotation reaches every socket built with it; key and trust managers are called by the sockets'
 * event loops and must be thread-safe, as the JDK's are).
 */
public final class HomaSecurity {
    /** The peer identity handlers see for an authenticated peer unless {@link #peerName} says otherwise. */
    public static final String DEFAULT_PEER_NAME = "pre-shared-key";
    /** How often a mutual-TLS socket replaces its master key unless {@link #rotateEvery} says otherwise. */
    public static final Duration DEFAULT_ROTATION = Duration.ofHours(1);

    private final HomaKeyRing keys;
    private final String peerName;
    private final KeyManager keyManager;
    private final TrustManager trustManager;
    private final HomaKeyRing.Cipher cipher;
    private final Duration rotateEvery;
    private final java.security.Provider cipherProvider;

    private HomaSecurity(HomaKeyRing keys, String peerName, KeyManager keyManager, TrustManager trustManager,
                         HomaKeyRing.Cipher cipher, Duration rotateEvery, java.security.Provider cipherProvider) {
        this.keys = keys;
        this.peerName = peerName;
        this.keyManager = keyManager;
        this.trustManager = trustManager;
        this.cipher = cipher;
        this.rotateEvery = rotateEvery;
        this.cipherProvider = cipherProvider;
    }

    /**
     * Seals with {@code keys}, which every peer of this socket holds too.
     *
     * @throws HomaBadArgumentException if {@code keys} is null
     */
    public static HomaSecurity preSharedKeys(HomaKeyRing keys) {
        if (keys == null) {
            throw new HomaBadArgumentException("keys must not be null");
        }
        return new HomaSecurity(keys, DEFAULT_PEER_NAME, null, null, keys.cipher(), null, null);
    }

    /**
     * Agrees keys with each peer over mutual TLS 1.3: {@code keyManager} presents this socket's
     * certificate (as server and as client), {@code trustManager} decides which peers'
     * certificates are accepted (both sides must present one). Peers are identified by their
     * certificate's subject ({@link HomaRequest#peerIdentity()}), not by host name: authorize on
     * it. Each socket listens for key exchanges on TCP at its own port number.
     *
     * @param keyManager   an {@link javax.net.ssl.X509KeyManager} (or an extended one), e.g. from a
     *                     {@link javax.net.ssl.KeyManagerFactory} over the socket's key store
     * @param trustManager an {@link javax.net.ssl.X509TrustManager}, e.g. from a
     *                     {@link javax.net.ssl.TrustManagerFactory} over the deployment's CA
     * @throws HomaBadArgumentException if either is null or not an X.509 manager
     */
    public static HomaSecurity mutualTls(KeyManager keyManager, TrustManager trustManager) {
        if (!(keyManager instanceof javax.net.ssl.X509KeyManager)) {
            throw new HomaBadArgumentException("keyManager must be an X509KeyManager, was " + keyManager);
        }
        if (!(trustManager instanceof javax.net.ssl.X509TrustManager)) {
            throw new HomaBadArgumentException("trustManager must be an X509TrustManager, was " + trustManager);
        }
        return new HomaSecurity(null, null, keyManager, trustManager, HomaKeyRing.Cipher.AES_GCM_128, DEFAULT_ROTATION, null);
    }

    /**
     * The same, with {@code name} as the identity of every authenticated peer
     * ({@link HomaRequest#peerIdentity()}, {@link RpcInfo#peerIdentity()}): with a pre-shared key,
     * all that is proven of a peer is that it holds the key, so the name says which key (a cluster,
     * a tenant) rather than which host.
     *
     * @throws HomaBadArgumentException if {@code name} is null or blank, or this is
     *                                  {@link #mutualTls} (whose identities are certificate subjects)
     */
    public HomaSecurity peerName(String name) {
        if (name == null || name.isBlank()) {
            throw new HomaBadArgumentException("peerName must not be null or blank, was " + (name == null ? "null" : "\"" + name + "\""));
        }
        if (isMutualTls()) {
            throw new HomaBadArgumentException("peerName is for pre-shared keys: with mutual TLS a peer's identity is its certificate's subject");
        }
        return new HomaSecurity(keys, name, null, null, cipher, null, cipherProvider);
    }

    /**
     * The cipher of a mutual-TLS socket's packets (default {@link HomaKeyRing.Cipher#AES_GCM_128});
     * both peers must use the same, or their key exchange fails.
     *
     * @throws HomaBadArgumentException if {@code c} is null, or this is {@link #preSharedKeys}
     *                                  (whose ring names its cipher)
     */
    public HomaSecurity cipher(HomaKeyRing.Cipher c) {
        if (c == null) {
            throw new HomaBadArgumentException("cipher must not be null");
        }
        if (!isMutualTls()) {
            throw new HomaBadArgumentException("cipher is for mutual TLS: a pre-shared key ring names its own cipher");
        }
        return new HomaSecurity(null, null, keyManager, trustManager, c, rotateEvery, cipherProvider);
    }

    /**
     * How often a mutual-TLS socket replaces its master key (default {@link #DEFAULT_ROTATION}):
     * it makes a new one, issues every connected peer fresh SPIs under it over their TLS
     * connections, and forgets the key before the previous one; calls in flight go on without a
     * failure or a repeat (docs/security.md, "Key life cycle").
     *
     * @throws HomaBadArgumentException if {@code period} is null or shorter than 100 ms, or this
     *                                  is {@link #preSharedKeys} (rotate the ring yourself)
     */
    public HomaSecurity rotateEvery(Duration period) {
        if (period == null || period.toMillis() < 100) {
            throw new HomaBadArgumentException("rotateEvery must be at least 100 ms, was " + period);
        }
        if (!isMutualTls()) {
            throw new HomaBadArgumentException("rotateEvery is for mutual TLS: rotate a pre-shared key ring with HomaKeyRing");
        }
        return new HomaSecurity(null, null, keyManager, trustManager, cipher, period, cipherProvider);
    }

    /**
     * The JCA provider whose AES-GCM seals and opens every packet (default: none named, so the
     * JCA's order of preference decides, {@code Cipher.getInstance("AES/GCM/NoPadding")}: the
     * JDK's SunJCE unless a faster provider was installed ahead of it). The cipher's work is most
     * of what sealing costs on large packets, and providers differ: on JDK 17 the JDK's AES-GCM
     * runs at 4-5.5 GB/s on 64 KB packets on an AVX-512 server core, Amazon Corretto Crypto
     * Provider's ({@code AmazonCorrettoCryptoProvider.INSTANCE}, a native AWS-LC build) at
     * 11-15 GB/s; JDK 25's own is as fast as the latter (docs/tuning.md, docs/benchmarks.md). The
     * packets are the same whichever seals them: peers need not use the same provider.
     *
     * @throws HomaBadArgumentException if {@code provider} is null or has no
     *                                  {@code AES/GCM/NoPadding}
     */
    public HomaSecurity cipherProvider(java.security.Provider provider) {
        if (provider == null) {
            throw new HomaBadArgumentException("cipherProvider must not be null (leave it unset for the JCA's order of preference)");
        }
        try {
            javax.crypto.Cipher.getInstance(io.homa.core.psp.PspCipher.TRANSFORMATION, provider);
        } catch (java.security.GeneralSecurityException e) {
            throw new HomaBadArgumentException("cipherProvider " + provider.getName() + " has no "
                    + io.homa.core.psp.PspCipher.TRANSFORMATION + ": " + e.getMessage());
        }
        return new HomaSecurity(keys, peerName, keyManager, trustManager, cipher, rotateEvery, provider);
    }

    /** The provider of every packet's AES-GCM; null: the JCA's order of preference ({@link #cipherProvider}). */
    public java.security.Provider cipherProvider() {
        return cipherProvider;
    }

    /** Whether keys are agreed over mutual TLS (else they are pre-shared). */
    public boolean isMutualTls() {
        return keyManager != null;
    }

    /** The pre-shared key ring; null with {@link #mutualTls}. */
    public HomaKeyRing keys() {
        return keys;
    }

    /** The identity a pre-shared-key peer is given; null with {@link #mutualTls} (certificate subjects). */
    public String peerName() {
        return peerName;
    }

    /** The cipher of every packet. */
    public HomaKeyRing.Cipher cipher() {
        return cipher;
    }

    /** How often a mutual-TLS socket rotates its master key; null for pre-shared keys. */
    public Duration rotateEvery() {
        return rotateEvery;
    }

    /** The key manager of {@link #mutualTls}; null for pre-shared keys. */
    public KeyManager keyManager() {
        return keyManager;
    }

    /** The trust manager of {@link #mutualTls}; null for pre-shared keys. */
    public TrustManager trustManager() {
        return trustManager;
    }

    @Override
    public String toString() {
        return isMutualTls()
                ? "HomaSecurity{mutualTls, " + cipher + ", rotateEvery=" + rotateEvery + providerText() + "}"
                : "HomaSecurity{preSharedKeys, " + keys + ", peerName=" + peerName + providerText() + "}";
    }

    private String providerText() {
        return cipherProvider == null ? "" : ", cipherProvider=" + cipherProvider.getName();
    }
}
