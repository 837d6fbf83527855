package io.homa.testing;

import io.homa.HomaSecurity;

import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A throwaway certificate authority for tests of {@link HomaSecurity#mutualTls} sockets (yours
 * and ours), made with the JDK's own {@code keytool} (EC P-256 keys, valid two days; nothing to
 * install, the same on every JDK): {@link #issue} makes a certificate for both TLS roles, signed
 * by this authority, and the {@link KeyManager} that presents it; {@link #trustManager} trusts
 * what this authority signed. Each certificate costs a few keytool runs (about a second), so one
 * is made per subject and reused. Its files live in a temporary directory removed at exit.
 *
 * <p>For tests only: the private keys sit unprotected on disk (under a fixed password) while the
 * JVM runs. Never use it for a deployment's certificates. Thread-safe.
 */
public final class TestCertificates {
    private static final String PASSWORD = "homa-test";
    private static final AtomicInteger LEAVES = new AtomicInteger();

    private final Path dir;
    private final Map<String, KeyManager> leaves = new ConcurrentHashMap<>();

    /**
     * A new authority named {@code CN=name}.
     *
     * @throws IllegalStateException if keytool fails (its output is in the message)
     */
    public TestCertificates(String name) {
        try {
            dir = Files.createTempDirectory("homa-pki-");
            dir.toFile().deleteOnExit();
            keytool("-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=" + name,
                    "-ext", "bc:c", "-validity", "2", "-keystore", path("ca.p12"), "-storetype", "PKCS12",
                    "-storepass", PASSWORD, "-keypass", PASSWORD);
            keytool("-exportcert", "-alias", "ca", "-keystore", path("ca.p12"), "-storepass", PASSWORD, "-rfc",
                    "-file", path("ca.pem"));
        } catch (IOException e) {
            throw new IllegalStateException("cannot make a test CA", e);
        }
    }

    /**
     * A key manager presenting a certificate for {@code subject} (an X.500 name, e.g.
     * {@code "CN=client-a,O=test"}), signed by this authority; the same one on every call with
     * the same subject.
     *
     * @throws IllegalStateException if keytool fails
     */
    public KeyManager issue(String subject) {
        return leaves.computeIfAbsent(subject, this::newLeaf);
    }

    private KeyManager newLeaf(String subject) {
        String n = "leaf" + LEAVES.incrementAndGet();
        String store = path(n + ".p12");
        try {
            keytool("-genkeypair", "-alias", "leaf", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", subject,
                    "-validity", "2", "-keystore", store, "-storetype", "PKCS12", "-storepass", PASSWORD, "-keypass", PASSWORD);
            keytool("-certreq", "-alias", "leaf", "-keystore", store, "-storepass", PASSWORD, "-file", path(n + ".csr"));
            keytool("-gencert", "-alias", "ca", "-keystore", path("ca.p12"), "-storepass", PASSWORD,
                    "-infile", path(n + ".csr"), "-outfile", path(n + ".pem"), "-rfc", "-validity", "2",
                    "-ext", "ku:c=digitalSignature", "-ext", "eku=serverAuth,clientAuth");
            keytool("-importcert", "-alias", "ca", "-file", path("ca.pem"), "-keystore", store, "-storepass", PASSWORD,
                    "-noprompt");
            keytool("-importcert", "-alias", "leaf", "-file", path(n + ".pem"), "-keystore", store, "-storepass", PASSWORD,
                    "-noprompt");
            KeyStore ks = load(store);
            ks.deleteEntry("ca"); // the key manager presents the leaf's chain; the CA entry is only for the import
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, PASSWORD.toCharArray());
            return kmf.getKeyManagers()[0];
        } catch (Exception e) {
            throw new IllegalStateException("cannot issue a test certificate for " + subject, e);
        }
    }

    /** A trust manager that trusts the certificates this authority signed (and no others). */
    public TrustManager trustManager() {
        try {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            ks.setCertificateEntry("ca", load(path("ca.p12")).getCertificate("ca"));
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ks);
            return tmf.getTrustManagers()[0];
        } catch (Exception e) {
            throw new IllegalStateException("cannot make a trust manager", e);
        }
    }

    /** {@link HomaSecurity#mutualTls} with a certificate for {@code subject}, trusting this authority. */
    public HomaSecurity security(String subject) {
        return HomaSecurity.mutualTls(issue(subject), trustManager());
    }

    private KeyStore load(String file) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(Path.of(file))) {
            ks.load(in, PASSWORD.toCharArray());
        }
        return ks;
    }

    private String path(String file) {
        Path p = dir.resolve(file);
        p.toFile().deleteOnExit();
        return p.toString();
    }

    /** Runs the keytool of the JDK running the tests; fails with its output if it does. */
    private static void keytool(String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IOException("keytool " + String.join(" ", args) + " failed: " + out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } finally {
            p.destroy();
        }
    }
}
