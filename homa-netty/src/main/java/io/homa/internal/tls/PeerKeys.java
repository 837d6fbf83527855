package io.homa.internal.tls;

import io.homa.core.psp.PspSendKey;

import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the key exchanges of one socket came to, shared by its event loops (thread-safe):
 * <ul>
 *   <li>To send: for each peer (its UDP address), the keys it issued, one per event loop of this
 *       socket, and its identity. A datagram to a peer without keys is not sent.</li>
 *   <li>To receive: for each SPI this socket issued, the peer (its UDP address) it was issued to.
 *       A packet that authenticates under an SPI but comes from another address is refused, so a
 *       peer cannot pass its packets off as another's (whose identity a handler would see).</li>
 *   <li>Identities: one per peer address at a time. A second peer that claims the same address
 *       (it would have to share the first one's IP) with another certificate is refused.</li>
 * </ul>
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class PeerKeys {
    /** The keys a peer issued to this socket, one per event loop of ours, and the session that brought them. */
    record Sending(String identity, PspSendKey[] byLoop, Object session) {
    }

    /** A peer address's identity, how many live sessions stand behind it, and the latest one's TLS session. */
    private record Claim(String identity, int sessions, javax.net.ssl.SSLSession tls) {
    }

    private final ConcurrentHashMap<InetSocketAddress, Sending> sending = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Integer, InetSocketAddress> issued = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<InetSocketAddress, Claim> claims = new ConcurrentHashMap<>();

    /** The key loop {@code loop} seals with to {@code peer}, or null when there is none (no exchange yet). */
    public PspSendKey sendKey(InetSocketAddress peer, int loop) {
        Sending s = sending.get(peer);
        return s == null ? null : s.byLoop[loop];
    }

    /** Whether this socket can seal to {@code peer} now. */
    public boolean canSendTo(InetSocketAddress peer) {
        return sending.containsKey(peer);
    }

    /** Whether a packet under {@code spi} (one this socket issued) may come from {@code from}. */
    public boolean allows(int spi, InetSocketAddress from) {
        InetSocketAddress to = issued.get(spi);
        return to != null && to.equals(from);
    }

    /** The verified identity of the peer at {@code peer}, or null when none is known. */
    public String identity(InetSocketAddress peer) {
        Claim c = claims.get(peer);
        return c == null ? null : c.identity;
    }

    /** The TLS session of the latest key exchange with the peer at {@code peer}, or null when none is known. */
    public javax.net.ssl.SSLSession tlsSession(InetSocketAddress peer) {
        Claim c = claims.get(peer);
        return c == null ? null : c.tls;
    }

    /** SPIs issued and still bound (for tests and stats). */
    public int issuedSpis() {
        return issued.size();
    }

    /**
     * A session speaks for {@code peer} as {@code identity}: false (and nothing changes) when a
     * live session of another identity holds that address.
     */
    boolean claim(InetSocketAddress peer, String identity, javax.net.ssl.SSLSession tls) {
        boolean[] ok = {true};
        claims.compute(peer, (a, c) -> {
            if (c == null) {
                return new Claim(identity, 1, tls);
            }
            if (!c.identity.equals(identity)) {
                ok[0] = false;
                return c;
            }
            return new Claim(identity, c.sessions + 1, tls);
        });
        return ok[0];
    }

    /** A session that {@link #claim}ed {@code peer} ended. */
    void unclaim(InetSocketAddress peer) {
        claims.computeIfPresent(peer, (a, c) -> c.sessions <= 1 ? null : new Claim(c.identity, c.sessions - 1, c.tls));
    }

    void bind(int spi, InetSocketAddress peer) {
        issued.put(spi, peer);
    }

    void unbind(int spi) {
        issued.remove(spi);
    }

    /** Seals to {@code peer} with these keys from the next datagram on. */
    void install(InetSocketAddress peer, String identity, PspSendKey[] byLoop, Object session) {
        sending.put(peer, new Sending(identity, byLoop, session));
    }

    /** Forgets the keys to {@code peer} if {@code session} brought them (it ended). */
    void forget(InetSocketAddress peer, Object session) {
        sending.computeIfPresent(peer, (a, s) -> s.session == session ? null : s);
    }
}
