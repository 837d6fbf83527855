package io.homa;

import com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider;
import io.homa.testing.TestCertificates;
import org.junit.jupiter.api.Test;

import javax.crypto.Cipher;
import javax.crypto.CipherSpi;
import javax.crypto.spec.GCMParameterSpec;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.security.AlgorithmParameters;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.Provider;
import java.security.SecureRandom;
import java.security.Security;
import java.security.spec.AlgorithmParameterSpec;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link HomaSecurity#cipherProvider}: every packet of a socket is sealed and opened by the named
 * provider's AES-GCM, and the packets are the same whichever provider made them, so a socket on
 * the JDK's cipher and one on Amazon Corretto Crypto Provider's talk to each other, with pre-shared
 * keys and with mutual TLS.
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class CipherProviderTest {
    private static final byte[] KEY = new SplittableRandom(31).ints(32, 0, 256).collect(
            java.io.ByteArrayOutputStream::new, (o, i) -> o.write(i), (a, b) -> { }).toByteArray();
    private static final int[] SIZES = {0, 100, 1_400, 10_000, 200_000, 1_000_000};

    private static HomaSecurity preShared() {
        return HomaSecurity.preSharedKeys(HomaKeyRing.of(HomaKeyRing.Cipher.AES_GCM_128, KEY));
    }

    private static long shell(HomaSocket s, HomaMetrics.Shell c) {
        return s.metrics().shell(c);
    }

    private static void echoes(HomaSocket server, HomaSocket client, long seed) throws Exception {
        server.serve(r -> r.reply(r.payload()));
        InetSocketAddress to = Loopback.addressOf(server);
        SplittableRandom random = new SplittableRandom(seed);
        for (int size : SIZES) {
            byte[] req = new byte[size];
            random.nextBytes(req);
            assertArrayEquals(req, client.call(to, req).get(30, TimeUnit.SECONDS), size + " B");
        }
        for (HomaSocket s : new HomaSocket[] {server, client}) {
            assertEquals(0, shell(s, HomaMetrics.Shell.SECURITY_AUTH_FAILED), s.metrics().toString());
            assertTrue(shell(s, HomaMetrics.Shell.DATAGRAMS_OPENED) > 0, s.metrics().toString());
        }
    }

    /** The socket's packets go through the provider it was given: every seal and every open. */
    @Test
    void everyPacketIsSealedAndOpenedByTheNamedProvider() throws Exception {
        CountingProvider counting = new CountingProvider();
        try (HomaSocket server = HomaSocket.open(Loopback.config().security(preShared().cipherProvider(counting)).build());
             HomaSocket client = HomaSocket.open(Loopback.config().security(preShared()).build())) {
            echoes(server, client, 1);
            // The two counts are read at different moments, and the server may still be sending
            // (an ACK, a retransmission) after the last echo completed: they must agree once it is
            // quiet, and never would if a datagram were sealed without the provider.
            Loopback.awaitIdle(client, server);
            Loopback.await(Duration.ofSeconds(10),
                    () -> shell(server, HomaMetrics.Shell.DATAGRAMS_SEALED) == counting.seals.get(),
                    () -> "every datagram the server sealed goes through the provider: "
                            + shell(server, HomaMetrics.Shell.DATAGRAMS_SEALED) + " sealed, "
                            + counting.seals.get() + " by the provider");
            long opens = counting.opens.get();
            assertTrue(opens >= shell(server, HomaMetrics.Shell.DATAGRAMS_OPENED) && opens > 0,
                    opens + " opens by the provider, " + server.metrics());
        }
    }

    /** A native provider's packets and the JDK's are the same bytes: both directions open, with pre-shared keys. */
    @Test
    void anotherProvidersSocketTalksToTheJdksWithPreSharedKeys() throws Exception {
        Provider accp = accp();
        try (HomaSocket server = HomaSocket.open(Loopback.config().security(preShared().cipherProvider(accp)).build());
             HomaSocket client = HomaSocket.open(Loopback.config().security(preShared()).build())) {
            echoes(server, client, 2);
        }
    }

    /** The same with keys from mutual TLS (the client on the native provider this time). */
    @Test
    void anotherProvidersSocketTalksToTheJdksWithMutualTls() throws Exception {
        Provider accp = accp();
        TestCertificates ca = new TestCertificates("homa-test-ca");
        try (HomaSocket server = HomaSocket.open(Loopback.config().security(ca.security("CN=server-p,O=homa-test")).build());
             HomaSocket client = HomaSocket.open(Loopback.config()
                     .security(ca.security("CN=client-p,O=homa-test").cipherProvider(accp)).build())) {
            echoes(server, client, 3);
        }
    }

    @Test
    void aProviderWithoutAesGcmIsRefusedWithTheReason() {
        Provider sun = Security.getProvider("SUN"); // signatures and digests, no ciphers
        HomaBadArgumentException e = assertThrows(HomaBadArgumentException.class, () -> preShared().cipherProvider(sun));
        assertTrue(e.getMessage().contains("SUN") && e.getMessage().contains("AES/GCM/NoPadding"), e.getMessage());
        e = assertThrows(HomaBadArgumentException.class, () -> preShared().cipherProvider(null));
        assertTrue(e.getMessage().contains("cipherProvider"), e.getMessage());
        assertNull(preShared().cipherProvider(), "unset: the JCA's order of preference");
        CountingProvider counting = new CountingProvider();
        HomaSecurity s = preShared().peerName("cluster-p").cipherProvider(counting);
        assertSame(counting, s.cipherProvider());
        assertSame(counting, s.peerName("cluster-q").cipherProvider(), "kept by the other options");
        assertTrue(s.toString().contains("cipherProvider=counting"), s.toString());
    }

    /** Amazon Corretto Crypto Provider, or a skip that says why it cannot run here. */
    private static Provider accp() {
        Throwable error = AmazonCorrettoCryptoProvider.INSTANCE.getLoadingError();
        assumeTrue(error == null, () -> "Amazon Corretto Crypto Provider's native library does not load on this machine: " + error);
        return AmazonCorrettoCryptoProvider.INSTANCE;
    }

    /** A provider whose AES-GCM is the JDK's, counting the seals and opens it is asked for. */
    static final class CountingProvider extends Provider {
        final AtomicLong seals = new AtomicLong();
        final AtomicLong opens = new AtomicLong();

        CountingProvider() {
            super("counting", "1.0", "the JDK's AES-GCM, counted");
            putService(new Service(this, "Cipher", "AES/GCM/NoPadding", CountingGcm.class.getName(), null, null) {
                @Override
                public Object newInstance(Object constructorParameter) {
                    return new CountingGcm(CountingProvider.this);
                }
            });
        }
    }

    /** The JDK's AES-GCM behind a counter of inits by direction. */
    static final class CountingGcm extends CipherSpi {
        private final CountingProvider counts;
        private final Cipher jdk;

        CountingGcm(CountingProvider counts) {
            this.counts = counts;
            try {
                this.jdk = Cipher.getInstance("AES/GCM/NoPadding", "SunJCE");
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        protected void engineInit(int opmode, Key key, AlgorithmParameterSpec params, SecureRandom random)
                throws java.security.InvalidKeyException, java.security.InvalidAlgorithmParameterException {
            (opmode == Cipher.ENCRYPT_MODE ? counts.seals : counts.opens).incrementAndGet();
            jdk.init(opmode, key, (GCMParameterSpec) params, random);
        }

        @Override
        protected void engineUpdateAAD(ByteBuffer src) {
            jdk.updateAAD(src);
        }

        @Override
        protected void engineUpdateAAD(byte[] src, int offset, int len) {
            jdk.updateAAD(src, offset, len);
        }

        @Override
        protected int engineDoFinal(ByteBuffer input, ByteBuffer output) throws javax.crypto.ShortBufferException,
                javax.crypto.IllegalBlockSizeException, javax.crypto.BadPaddingException {
            return jdk.doFinal(input, output);
        }

        @Override
        protected byte[] engineDoFinal(byte[] input, int offset, int len)
                throws javax.crypto.IllegalBlockSizeException, javax.crypto.BadPaddingException {
            return jdk.doFinal(input, offset, len);
        }

        @Override
        protected int engineDoFinal(byte[] input, int offset, int len, byte[] output, int outOffset)
                throws javax.crypto.ShortBufferException, javax.crypto.IllegalBlockSizeException,
                javax.crypto.BadPaddingException {
            return jdk.doFinal(input, offset, len, output, outOffset);
        }

        @Override
        protected int engineUpdate(ByteBuffer input, ByteBuffer output) throws javax.crypto.ShortBufferException {
            return jdk.update(input, output);
        }

        @Override
        protected byte[] engineUpdate(byte[] input, int offset, int len) {
            return jdk.update(input, offset, len);
        }

        @Override
        protected int engineUpdate(byte[] input, int offset, int len, byte[] output, int outOffset)
                throws javax.crypto.ShortBufferException {
            return jdk.update(input, offset, len, output, outOffset);
        }

        @Override
        protected void engineSetMode(String mode) {
        }

        @Override
        protected void engineSetPadding(String padding) {
        }

        @Override
        protected int engineGetBlockSize() {
            return jdk.getBlockSize();
        }

        @Override
        protected int engineGetOutputSize(int inputLen) {
            return jdk.getOutputSize(inputLen);
        }

        @Override
        protected byte[] engineGetIV() {
            return jdk.getIV();
        }

        @Override
        protected AlgorithmParameters engineGetParameters() {
            return jdk.getParameters();
        }

        @Override
        protected void engineInit(int opmode, Key key, SecureRandom random) {
            throw new UnsupportedOperationException("a GCM init needs its nonce");
        }

        @Override
        protected void engineInit(int opmode, Key key, AlgorithmParameters params, SecureRandom random) {
            throw new UnsupportedOperationException("a GCM init needs its nonce as a GCMParameterSpec");
        }
    }
}
