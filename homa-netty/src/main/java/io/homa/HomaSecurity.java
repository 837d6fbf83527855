package io.homa;

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
 * <p>This release has the pre-shared mode: every host holds the same {@link HomaKeyRing}. Key
 * exchange over mutual TLS is not built yet (docs/security.md says what that leaves open). Costs:
 * 32 bytes per datagram (segments shrink by that much to fit the MTU), and the payload is copied
 * once by the cipher, also with {@link HomaConfig.Builder#zeroCopySend}. Not with
 * {@link HomaConfig.Builder#tcpFallback} (its TCP frames would be plaintext): that combination is refused.
 *
 * <p>Immutable and thread-safe (its key ring is itself thread-safe and shared, so rotation reaches
 * every socket built with it).
 */
public final class HomaSecurity {
    /** The peer identity handlers see for an authenticated peer unless {@link #peerName} says otherwise. */
    public static final String DEFAULT_PEER_NAME = "pre-shared-key";

    private final HomaKeyRing keys;
    private final String peerName;

    private HomaSecurity(HomaKeyRing keys, String peerName) {
        this.keys = keys;
        this.peerName = peerName;
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
        return new HomaSecurity(keys, DEFAULT_PEER_NAME);
    }

    /**
     * The same, with {@code name} as the identity of every authenticated peer
     * ({@link HomaRequest#peerIdentity()}, {@link RpcInfo#peerIdentity()}): with a pre-shared key,
     * all that is proven of a peer is that it holds the key, so the name says which key (a cluster,
     * a tenant) rather than which host.
     *
     * @throws HomaBadArgumentException if {@code name} is null or blank
     */
    public HomaSecurity peerName(String name) {
        if (name == null || name.isBlank()) {
            throw new HomaBadArgumentException("peerName must not be null or blank, was " + (name == null ? "null" : "\"" + name + "\""));
        }
        return new HomaSecurity(keys, name);
    }

    /** The key ring. */
    public HomaKeyRing keys() {
        return keys;
    }

    /** The identity an authenticated peer is given. */
    public String peerName() {
        return peerName;
    }

    @Override
    public String toString() {
        return "HomaSecurity{preSharedKeys, " + keys + ", peerName=" + peerName + "}";
    }
}
