package io.homa;

import io.homa.testing.TestCertificates;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Secured sockets whose keys come from mutual TLS 1.3 ({@link HomaSecurity#mutualTls}), on real
 * sockets through the public API: the handler sees the client's certificate subject; an
 * untrusted client, an untrusted server and another cipher are each refused before a byte of the
 * request is sent, with {@link HomaAuthenticationException} and a counted reason; plaintext to
 * such a server runs no handler; and master keys rotating every 100 ms under load fail and
 * repeat no call.
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class MutualTlsSocketTest {
    private static final String CLIENT = "CN=client-a,O=homa-test";
    private static final String SERVER = "CN=server-b,O=homa-test";
    private static final TestCertificates CA = new TestCertificates("homa-test-ca");

    private static long shell(HomaSocket s, HomaMetrics.Shell c) {
        return s.metrics().shell(c);
    }

    @Test
    void callsRunSealedAndHandlersSeeTheCertificateSubject() throws Exception {
        Set<String> identities = ConcurrentHashMap.newKeySet();
        Set<String> protocols = ConcurrentHashMap.newKeySet();
        try (HomaSocket server = HomaSocket.open(Loopback.config().security(CA.security(SERVER)).eventLoops(2).build());
             HomaSocket client = HomaSocket.open(Loopback.config().security(CA.security(CLIENT)).build())) {
            server.serve(r -> {
                identities.add(String.valueOf(r.peerIdentity()));
                protocols.add(r.tlsSession().getProtocol());
                r.reply(r.payload());
            });
            InetSocketAddress to = Loopback.addressOf(server);
            SplittableRandom random = new SplittableRandom(11);
            for (int size : new int[] {0, 100, 1_400, 10_000, 200_000, 1_000_000}) {
                byte[] req = new byte[size];
                random.nextBytes(req);
                assertArrayEquals(req, client.call(to, req).get(30, TimeUnit.SECONDS), size + " B");
            }
            assertEquals(Set.of(CLIENT), identities);
            assertEquals(java.util.Map.of(CLIENT, 6L), server.metrics().requestsByPeerIdentity());
            assertEquals(Set.of("TLSv1.3"), protocols);
            javax.net.ssl.SSLSession session = client.tlsSession(to);
            assertEquals(SERVER, session.getPeerPrincipal().getName());
            assertEquals("TLSv1.3", session.getProtocol());
            assertNull(client.tlsSession(new InetSocketAddress("127.0.0.1", 9)), "no exchange with that peer");
            assertTrue(client.rpcs().stream().allMatch(r -> SERVER.equals(r.peerIdentity())), client.rpcs().toString());
            assertEquals(1, shell(client, HomaMetrics.Shell.TLS_HANDSHAKES), "one exchange per peer pair");
            assertEquals(1, shell(server, HomaMetrics.Shell.TLS_HANDSHAKES));
            assertEquals(2, shell(client, HomaMetrics.Shell.KEYS_ISSUED), "one SPI per event loop of the server");
            assertEquals(1, shell(server, HomaMetrics.Shell.KEYS_ISSUED), "one SPI for the client's one loop");
            HomaMetrics cm = client.metrics();
            assertEquals(cm.shell(HomaMetrics.Shell.DATAGRAMS_SEALED), cm.shell(HomaMetrics.Shell.DATAGRAMS_SENT), cm.toString());
            for (HomaSocket s : new HomaSocket[] {client, server}) {
                for (HomaMetrics.Shell c : new HomaMetrics.Shell[] {HomaMetrics.Shell.SECURITY_NOT_SEALED,
                        HomaMetrics.Shell.SECURITY_AUTH_FAILED, HomaMetrics.Shell.SECURITY_UNKNOWN_KEY,
                        HomaMetrics.Shell.SECURITY_WRONG_PEER, HomaMetrics.Shell.SECURITY_NO_SEND_KEY,
                        HomaMetrics.Shell.TLS_REFUSED}) {
                    assertEquals(0, shell(s, c), c + ": " + s.metrics());
                }
            }
        }
    }

    @Test
    void aClientWithAnUntrustedCertificateIsRefused() throws Exception {
        TestCertificates stranger = new TestCertificates("someone-else");
        assertRefused(CA.security(SERVER), HomaSecurity.mutualTls(stranger.issue(CLIENT), CA.trustManager()));
    }

    @Test
    void aServerWithAnUntrustedCertificateIsRefused() throws Exception {
        TestCertificates stranger = new TestCertificates("someone-else");
        assertRefused(HomaSecurity.mutualTls(stranger.issue(SERVER), CA.trustManager()), CA.security(CLIENT));
    }

    @Test
    void anotherCipherIsRefused() throws Exception {
        assertRefused(CA.security(SERVER).cipher(HomaKeyRing.Cipher.AES_GCM_256), CA.security(CLIENT));
    }

    /** The call fails with HomaAuthenticationException, no handler runs, no datagram leaves the client. */
    private static void assertRefused(HomaSecurity serverSecurity, HomaSecurity clientSecurity) throws Exception {
        AtomicInteger handled = new AtomicInteger();
        try (HomaSocket server = HomaSocket.open(Loopback.config().security(serverSecurity).build());
             HomaSocket client = HomaSocket.open(Loopback.config().security(clientSecurity).build())) {
            server.serve(r -> {
                handled.incrementAndGet();
                r.reply(r.toByteArray());
            });
            CompletableFuture<byte[]> call = client.call(Loopback.addressOf(server), new byte[100]);
            ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(30, TimeUnit.SECONDS));
            assertInstanceOf(HomaAuthenticationException.class, e.getCause(), () -> String.valueOf(e.getCause()));
            assertEquals(HomaException.Kind.AUTHENTICATION_FAILED, ((HomaException) e.getCause()).kind());
            assertEquals(0, handled.get());
            assertEquals(0, shell(client, HomaMetrics.Shell.DATAGRAMS_SENT), "nothing of the request left");
            assertEquals(0, shell(server, HomaMetrics.Shell.DATAGRAMS_SENT));
            Loopback.await(Duration.ofSeconds(10), () -> shell(server, HomaMetrics.Shell.TLS_REFUSED)
                    + shell(client, HomaMetrics.Shell.TLS_REFUSED) > 0, () -> "refusal not counted: " + server.metrics());
            assertEquals(1, shell(client, HomaMetrics.Shell.CALLS_FAILED));
        }
    }

    @Test
    void plaintextAndPreSharedKeysGetNoHandlerRun() throws Exception {
        AtomicInteger handled = new AtomicInteger();
        byte[] key = new byte[32];
        try (HomaSocket server = HomaSocket.open(Loopback.config().security(CA.security(SERVER)).build());
             HomaSocket plain = HomaSocket.open(Loopback.config().build());
             HomaSocket preShared = HomaSocket.open(Loopback.config().security(HomaSecurity.preSharedKeys(
                     HomaKeyRing.of(HomaKeyRing.Cipher.AES_GCM_128, key))).build())) {
            server.serve(r -> {
                handled.incrementAndGet();
                r.reply(r.toByteArray());
            });
            for (HomaSocket c : new HomaSocket[] {plain, preShared}) {
                CompletableFuture<byte[]> call = c.call(Loopback.addressOf(server), new byte[100], Duration.ofMillis(300));
                ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(10, TimeUnit.SECONDS));
                assertInstanceOf(HomaTimeoutException.class, e.getCause());
            }
            assertTrue(shell(server, HomaMetrics.Shell.SECURITY_NOT_SEALED) > 0, server.metrics().toString());
            assertTrue(shell(server, HomaMetrics.Shell.SECURITY_AUTH_FAILED) > 0, server.metrics().toString());
            assertEquals(0, handled.get());
            assertEquals(0, shell(server, HomaMetrics.Shell.DATAGRAMS_SENT), "the server answered an unauthenticated peer");
        }
    }

    @Test
    void keysRotateUnderLoadWithoutAFailedOrRepeatedCall() throws Exception {
        Set<Long> seen = ConcurrentHashMap.newKeySet();
        AtomicInteger repeated = new AtomicInteger();
        Duration every = Duration.ofMillis(100);
        try (HomaSocket server = HomaSocket.open(Loopback.config().security(CA.security(SERVER).rotateEvery(every))
                .eventLoops(2).build());
             HomaSocket client = HomaSocket.open(Loopback.config().security(CA.security(CLIENT).rotateEvery(every)).build())) {
            server.serve(r -> {
                long id = ByteBuffer.wrap(r.toByteArray()).getLong();
                if (!seen.add(id)) {
                    repeated.incrementAndGet();
                }
                r.reply(r.toByteArray());
            });
            InetSocketAddress to = Loopback.addressOf(server);
            AtomicLong next = new AtomicLong();
            AtomicLong completed = new AtomicLong();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> callers = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                Thread th = new Thread(() -> {
                    try {
                        // until both sides rotated 5 times (and at most 60 s, bounded by the join below)
                        while (shell(server, HomaMetrics.Shell.KEY_ROTATIONS) < 5
                                || shell(client, HomaMetrics.Shell.KEY_ROTATIONS) < 5) {
                            long id = next.incrementAndGet();
                            byte[] req = ByteBuffer.allocate(8 + (int) (id % 3) * 3_000).putLong(id).array();
                            assertArrayEquals(req, client.call(to, req).get(30, TimeUnit.SECONDS));
                            completed.incrementAndGet();
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "caller-" + t);
                th.setDaemon(true);
                th.start();
                callers.add(th);
            }
            for (Thread th : callers) {
                th.join(60_000);
            }
            assertNull(failure.get(), () -> "a call failed during the rotations: " + failure.get());
            assertTrue(callers.stream().noneMatch(Thread::isAlive), "five rotations took over 60 s");
            assertEquals(0, repeated.get(), "a request ran twice");
            assertEquals(completed.get(), seen.size());
            assertTrue(shell(server, HomaMetrics.Shell.KEYS_ISSUED) >= 5, "the server issued fresh SPIs at each rotation");
            assertTrue(shell(client, HomaMetrics.Shell.KEYS_ISSUED) >= 10, "two loops' worth at each rotation");
            for (HomaSocket s : new HomaSocket[] {client, server}) {
                assertEquals(0, shell(s, HomaMetrics.Shell.CALLS_FAILED), s.metrics().toString());
                assertEquals(1, shell(s, HomaMetrics.Shell.TLS_HANDSHAKES), "rotation reuses the connection");
            }
        }
    }

    @Test
    void badArgumentsSayWhatWasWrong() {
        assertThrows(HomaBadArgumentException.class, () -> HomaSecurity.mutualTls(null, CA.trustManager()));
        assertThrows(HomaBadArgumentException.class, () -> HomaSecurity.mutualTls(CA.issue(CLIENT), null));
        HomaSecurity s = CA.security(CLIENT);
        assertThrows(HomaBadArgumentException.class, () -> s.peerName("x"));
        assertThrows(HomaBadArgumentException.class, () -> s.rotateEvery(Duration.ofMillis(10)));
        assertThrows(HomaBadArgumentException.class, () -> s.cipher(null));
        assertTrue(Loopback.config().security(s).tcpFallback(true).build().tcpFallback(),
                "the fallback runs over TLS (MutualTlsFallbackTest)");
        assertTrue(s.isMutualTls());
        assertNull(s.keys());
    }
}
