package io.homa.grpc;

import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ServerCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.util.CertificateUtils;
import io.homa.HomaBadArgumentException;
import io.homa.HomaSecurity;

import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509KeyManager;
import javax.net.ssl.X509TrustManager;
import java.io.ByteArrayInputStream;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * grpc-java's TLS credentials as a Homa socket's {@link HomaSecurity#mutualTls}: the key manager
 * (or the PEM certificate chain and PKCS#8 private key) presents this side's certificate, the
 * trust manager (or the PEM root certificates, or the JDK's default trust store) judges the
 * peer's. Homa's key exchange is always mutual, so a client needs a certificate and a server
 * must require the client's. Credentials that ask for what this cannot honour are refused with
 * {@link HomaBadArgumentException}, never weakened.
 */
final class TlsCredentials {
    private static final char[] NO_PASSWORD = new char[0];

    private TlsCredentials() {
    }

    /** The security of a channel's socket: null for insecure credentials. */
    static HomaSecurity forChannel(ChannelCredentials creds) {
        if (creds == null) {
            throw new HomaBadArgumentException("credentials must not be null");
        }
        if (creds instanceof InsecureChannelCredentials) {
            return null;
        }
        if (!(creds instanceof TlsChannelCredentials t)) {
            throw new HomaBadArgumentException("homa-grpc takes InsecureChannelCredentials or TlsChannelCredentials, not "
                    + creds.getClass().getSimpleName());
        }
        Set<TlsChannelCredentials.Feature> missing = t.incomprehensible(
                EnumSet.of(TlsChannelCredentials.Feature.MTLS, TlsChannelCredentials.Feature.CUSTOM_MANAGERS));
        if (!missing.isEmpty()) {
            throw new HomaBadArgumentException("homa-grpc cannot honour these TLS credentials' features: " + missing);
        }
        KeyManager km = keyManager(t.getKeyManagers(), t.getCertificateChain(), t.getPrivateKey(),
                t.getPrivateKeyPassword(), "the channel");
        return HomaSecurity.mutualTls(km, trustManager(t.getTrustManagers(), t.getRootCertificates()));
    }

    /** The security of a server's socket: null for insecure credentials. */
    static HomaSecurity forServer(ServerCredentials creds) {
        if (creds == null) {
            throw new HomaBadArgumentException("credentials must not be null");
        }
        if (creds instanceof InsecureServerCredentials) {
            return null;
        }
        if (!(creds instanceof TlsServerCredentials t)) {
            throw new HomaBadArgumentException("homa-grpc takes InsecureServerCredentials or TlsServerCredentials, not "
                    + creds.getClass().getSimpleName());
        }
        Set<TlsServerCredentials.Feature> missing = t.incomprehensible(
                EnumSet.of(TlsServerCredentials.Feature.MTLS, TlsServerCredentials.Feature.CUSTOM_MANAGERS));
        if (!missing.isEmpty()) {
            throw new HomaBadArgumentException("homa-grpc cannot honour these TLS credentials' features: " + missing);
        }
        if (t.getClientAuth() != TlsServerCredentials.ClientAuth.REQUIRE) {
            throw new HomaBadArgumentException("Homa's key exchange is always mutual: the TlsServerCredentials must"
                    + " require client certificates (clientAuth(ClientAuth.REQUIRE)), were " + t.getClientAuth());
        }
        KeyManager km = keyManager(t.getKeyManagers(), t.getCertificateChain(), t.getPrivateKey(),
                t.getPrivateKeyPassword(), "the server");
        return HomaSecurity.mutualTls(km, trustManager(t.getTrustManagers(), t.getRootCertificates()));
    }

    private static KeyManager keyManager(List<KeyManager> managers, byte[] chainPem, byte[] keyPem, String password,
                                         String who) {
        if (managers != null) {
            for (KeyManager m : managers) {
                if (m instanceof X509KeyManager) {
                    return m;
                }
            }
            throw new HomaBadArgumentException("the credentials' key managers hold no X509KeyManager");
        }
        if (chainPem == null || keyPem == null) {
            throw new HomaBadArgumentException("Homa's key exchange is always mutual: " + who
                    + " needs a certificate and its private key (keyManager(...) in the TLS credentials)");
        }
        if (password != null) {
            throw new HomaBadArgumentException("an encrypted private key is not supported: give a PKCS#8 key in"
                    + " plain PEM, or a key manager");
        }
        try {
            X509Certificate[] chain = CertificateUtils.getX509Certificates(new ByteArrayInputStream(chainPem));
            PrivateKey key = CertificateUtils.getPrivateKey(new ByteArrayInputStream(keyPem));
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            ks.setKeyEntry("key", key, NO_PASSWORD, chain);
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, NO_PASSWORD);
            return kmf.getKeyManagers()[0];
        } catch (Exception e) {
            throw new HomaBadArgumentException("cannot read the credentials' certificate chain and private key: " + e, e);
        }
    }

    private static TrustManager trustManager(List<TrustManager> managers, byte[] rootsPem) {
        if (managers != null) {
            for (TrustManager m : managers) {
                if (m instanceof X509TrustManager) {
                    return m;
                }
            }
            throw new HomaBadArgumentException("the credentials' trust managers hold no X509TrustManager");
        }
        try {
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            if (rootsPem == null) {
                tmf.init((KeyStore) null); // the JDK's default trust store, as grpc-java does
            } else {
                KeyStore ks = KeyStore.getInstance("PKCS12");
                ks.load(null, null);
                int i = 0;
                for (X509Certificate c : CertificateUtils.getX509Certificates(new ByteArrayInputStream(rootsPem))) {
                    ks.setCertificateEntry("root-" + i++, c);
                }
                tmf.init(ks);
            }
            return tmf.getTrustManagers()[0];
        } catch (Exception e) {
            throw new HomaBadArgumentException("cannot read the credentials' root certificates: " + e, e);
        }
    }
}
