package io.homa.internal.tls;

import io.homa.internal.Failure;
import io.homa.internal.TlsSettings;
import io.netty.handler.ssl.SslHandler;

import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import javax.net.ssl.TrustManager;
import java.net.InetSocketAddress;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;

/**
 * The TLS 1.3 side of a mutual-TLS socket's TCP connections: the key exchange and the TCP
 * fallback's calls share the socket's TCP port, and each connection says by ALPN which of the two
 * it carries ({@link #KEY_EXCHANGE}, {@link #FALLBACK}); a connection that names neither is
 * refused by the handshake. Both sides present a certificate and verify the other's with the
 * user's key and trust managers. Thread-safe.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class TlsContext {
    /** ALPN name of a key-exchange connection ({@link KeyFrames}). */
    public static final String KEY_EXCHANGE = "homa-keys/1";
    /** ALPN name of a connection that carries the TCP fallback's calls. */
    public static final String FALLBACK = "homa-tcp/1";
    /** A TLS handshake that takes longer than this fails. */
    public static final int HANDSHAKE_TIMEOUT_MILLIS = 10_000;

    private final SSLContext ssl;

    public TlsContext(TlsSettings tls, Failure.Factory failures) {
        try {
            this.ssl = SSLContext.getInstance("TLSv1.3");
            ssl.init(new KeyManager[]{tls.keyManager()}, new TrustManager[]{tls.trustManager()}, new SecureRandom());
        } catch (GeneralSecurityException e) {
            throw failures.create(Failure.BAD_ARGUMENT, "cannot set up TLS 1.3 with the given key and trust managers: " + e, e);
        }
    }

    /** The handler of a connection this socket makes to {@code peer}, for {@code protocol}. */
    public SslHandler client(InetSocketAddress peer, String protocol) {
        SSLEngine engine = ssl.createSSLEngine(peer.getHostString(), peer.getPort());
        engine.setUseClientMode(true);
        return handler(engine, protocol);
    }

    /**
     * The handler of a connection this socket accepted: client certificate required; the key
     * exchange, and the fallback's calls if {@code fallback} (else a client that asks for them
     * fails its handshake).
     */
    public SslHandler server(boolean fallback) {
        SSLEngine engine = ssl.createSSLEngine();
        engine.setUseClientMode(false);
        engine.setNeedClientAuth(true);
        return fallback ? handler(engine, KEY_EXCHANGE, FALLBACK) : handler(engine, KEY_EXCHANGE);
    }

    private static SslHandler handler(SSLEngine engine, String... protocols) {
        SSLParameters p = engine.getSSLParameters();
        p.setProtocols(new String[]{"TLSv1.3"});
        p.setApplicationProtocols(protocols);
        engine.setSSLParameters(p);
        SslHandler h = new SslHandler(engine);
        h.setHandshakeTimeoutMillis(HANDSHAKE_TIMEOUT_MILLIS);
        return h;
    }

    /** What the handshake of {@code h} agreed the connection carries: one of the two names, or "" (none). */
    public static String protocolOf(SslHandler h) {
        String p = h.engine().getApplicationProtocol();
        return p == null ? "" : p;
    }

    /** The verified peer's identity (its certificate's subject, RFC 2253), or null if it presented none. */
    public static String identityOf(SSLSession session) {
        try {
            return session.getPeerPrincipal().getName();
        } catch (SSLPeerUnverifiedException e) {
            return null;
        }
    }
}
