package io.homa;

import io.homa.testing.TestCertificates;
import org.junit.jupiter.api.Test;

import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The TCP fallback of mutual-TLS sockets, on real sockets through the public API: calls that Homa
 * cannot carry run over TLS 1.3 connections verified both ways, and handlers see the same
 * certificate subject as over Homa; the shared TCP port refuses plaintext frames, connections that
 * name no protocol, clients without a certificate, and fallback connections to a socket without
 * the fallback, each counted and with no handler run; and a call's deadline bounds its wait for
 * keys.
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class MutualTlsFallbackTest {
    private static final String CLIENT = "CN=fallback-client,O=homa-test";
    private static final String SERVER = "CN=fallback-server,O=homa-test";
    private static final TestCertificates CA = new TestCertificates("homa-fallback-ca");

    private static long shell(HomaSocket s, HomaMetrics.Shell c) {
        return s.metrics().shell(c);
    }

    private static HomaConfig.Builder secured(String subject) {
        return Loopback.config().security(CA.security(subject)).tcpFallback(true).probeInterval(Duration.ofMillis(100));
    }

    @Test
    void fallbackCallsRunOverVerifiedTlsAndCarryTheClientsIdentity() throws Exception {
        Set<String> identities = ConcurrentHashMap.newKeySet();
        Set<String> protocols = ConcurrentHashMap.newKeySet();
        CountingEcho echo = new CountingEcho();
        try (HomaSocket server = HomaSocket.open(secured(SERVER).build());
             HomaSocket client = HomaSocket.open(secured(CLIENT).build())) {
            server.serve(r -> {
                identities.add(String.valueOf(r.peerIdentity()));
                protocols.add(r.tlsSession() == null ? "none" : r.tlsSession().getProtocol());
                echo.handle(r);
            });
            Loopback.shellOf(server).closeUdpForTests();
            InetSocketAddress to = Loopback.addressOf(server);

            byte[] first = CountingEcho.request(0, 1_000);
            assertArrayEquals(first, client.call(to, first).get(30, TimeUnit.SECONDS));
            assertEquals(1, client.metrics().shell(HomaMetrics.Shell.FALLBACKS), client.metrics().toString());
            // Now on TCP directly: sizes and a burst over the pool of TLS connections.
            List<CompletableFuture<byte[]>> calls = new ArrayList<>();
            for (int i = 1; i <= 100; i++) {
                calls.add(client.call(to, CountingEcho.request(i, i == 100 ? 1 << 20 : i * 37)));
            }
            for (int i = 1; i <= 100; i++) {
                assertArrayEquals(CountingEcho.request(i, i == 100 ? 1 << 20 : i * 37),
                        calls.get(i - 1).get(30, TimeUnit.SECONDS));
            }
            assertEquals(101, echo.total(), "every request ran once");
            assertEquals(101, echo.distinct());
            assertEquals(Set.of(CLIENT), identities);
            assertEquals(Set.of("TLSv1.3"), protocols);
            assertEquals(java.util.Map.of(CLIENT, 101L), server.metrics().requestsByPeerIdentity());
            assertEquals(101, shell(server, HomaMetrics.Shell.TCP_REQUESTS), server.metrics().toString());
            long connections = shell(client, HomaMetrics.Shell.TCP_CONNECTIONS_OPENED);
            // One key exchange, and one verified handshake per fallback connection, on both sides.
            assertEquals(1 + connections, shell(client, HomaMetrics.Shell.TLS_HANDSHAKES), client.metrics().toString());
            Loopback.await(Duration.ofSeconds(10), () -> shell(server, HomaMetrics.Shell.TLS_HANDSHAKES) == 1 + connections,
                    () -> server.metrics().toString());
            assertEquals(0, shell(server, HomaMetrics.Shell.TLS_REFUSED));
            assertEquals(0, shell(client, HomaMetrics.Shell.TLS_REFUSED));
        }
    }

    @Test
    void theSharedPortRefusesAllButVerifiedTls() throws Exception {
        AtomicInteger handled = new AtomicInteger();
        try (HomaSocket server = HomaSocket.open(secured(SERVER).build());
             HomaSocket noFallback = HomaSocket.open(Loopback.config().security(CA.security(SERVER)).build())) {
            server.serve(r -> {
                handled.incrementAndGet();
                r.reply(r.toByteArray());
            });
            int port = server.localAddress().getPort();
            long refused = 0;

            // A plain fallback client's request.
            try (Socket s = new Socket(Loopback.HOST, port)) {
                assertClosed(s);
            }
            refused = awaitRefused(server, refused + 1);

            // Verified both ways, but naming no protocol.
            try (SSLSocket s = tlsClient(CA.issue(CLIENT), port)) {
                assertClosed(s);
            }
            refused = awaitRefused(server, refused + 1);

            // The fallback's protocol, without a client certificate.
            try (SSLSocket s = tlsClient(null, port, "homa-tcp/1")) {
                assertClosed(s);
            }
            refused = awaitRefused(server, refused + 1);

            // A verified fallback connection to a socket whose fallback is off.
            try (SSLSocket s = tlsClient(CA.issue(CLIENT), noFallback.localAddress().getPort(), "homa-tcp/1")) {
                assertClosed(s);
            }
            Loopback.await(Duration.ofSeconds(10), () -> shell(noFallback, HomaMetrics.Shell.TLS_REFUSED) == 1,
                    () -> noFallback.metrics().toString());

            assertEquals(0, handled.get(), "a handler ran for an unverified connection");
            assertEquals(0, shell(server, HomaMetrics.Shell.TCP_REQUESTS));
            assertEquals(0, shell(server, HomaMetrics.Shell.TCP_BAD_FRAMES), "a frame reached the fallback's decoder");
            assertEquals(0, shell(server, HomaMetrics.Shell.TLS_HANDSHAKES), "no connection counted as verified");
        }
    }

    /**
     * A verified host naming another identity's Homa address (same IP, the other's UDP port) in a
     * fallback request is answered with a drop and counted, and no handler runs: it cannot claim
     * the other's RPCs nor be counted as it.
     */
    @Test
    void aFallbackRequestCannotNameAnotherIdentitysAddress() throws Exception {
        AtomicInteger handled = new AtomicInteger();
        try (HomaSocket server = HomaSocket.open(secured(SERVER).build());
             HomaSocket client = HomaSocket.open(secured(CLIENT).build())) {
            server.serve(r -> {
                handled.incrementAndGet();
                r.reply(r.toByteArray());
            });
            byte[] req = CountingEcho.request(1, 100);
            assertArrayEquals(req, client.call(Loopback.addressOf(server), req).get(30, TimeUnit.SECONDS));
            assertEquals(1, handled.get());
            try (SSLSocket other = tlsClient(CA.issue("CN=someone-else,O=homa-test"), server.localAddress().getPort(),
                    "homa-tcp/1")) {
                other.setSoTimeout(10_000);
                java.io.DataOutputStream out = new java.io.DataOutputStream(other.getOutputStream());
                out.write(java.nio.ByteBuffer.allocate(4 + 27 + 3).putInt(27 + 3).put((byte) 1).putLong(1).putLong(0)
                        .putShort((short) client.localAddress().getPort()).putLong(0).put(new byte[] {'x', 'y', 'z'})
                        .array());
                out.flush();
                java.io.DataInputStream in = new java.io.DataInputStream(other.getInputStream());
                int length = in.readInt();
                assertEquals(1, in.readByte(), "status DROPPED");
                assertEquals(1, in.readLong(), "the call id");
                byte[] reason = new byte[length - 9];
                in.readFully(reason);
                assertTrue(new String(reason, java.nio.charset.StandardCharsets.UTF_8).contains("another identity"));
            }
            assertEquals(1, handled.get(), "the impostor's request ran");
            assertEquals(1, shell(server, HomaMetrics.Shell.TLS_REFUSED));
            assertEquals(java.util.Map.of(CLIENT, 1L), server.metrics().requestsByPeerIdentity());
        }
    }

    /**
     * 64 connections that never finish a handshake (16 from each of 4 addresses) stop the listener
     * accepting: a 65th client gets no TLS answer while they last; a 17th from one address is
     * refused at once. Once they are gone the listener accepts again and a verified client gets in.
     */
    @Test
    void silentConnectionsPauseTheListenerUntilTheyEnd() throws Exception {
        try (HomaSocket server = HomaSocket.open(secured(SERVER).build());
             HomaSocket client = HomaSocket.open(secured(CLIENT).build())) {
            server.serve(r -> r.reply(r.toByteArray()));
            int port = server.localAddress().getPort();
            List<Socket> silent = new ArrayList<>();
            try {
                for (int i = 0; i < 17; i++) { // one address's share, and one more from it
                    silent.add(from("127.0.0.2", port));
                }
                Loopback.await(Duration.ofSeconds(10), () -> shell(server, HomaMetrics.Shell.TLS_REFUSED) == 1,
                        () -> "the 17th from one address was not refused: " + server.metrics());
                for (int i = 16; i < 64; i++) {
                    silent.add(from("127.0.0." + (3 + (i - 16) / 16), port));
                }
                Loopback.await(Duration.ofSeconds(10), () -> shell(server, HomaMetrics.Shell.TLS_ACCEPTS_PAUSED) == 1,
                        () -> "the listener never paused: " + server.metrics());
                try (SSLSocket waiting = tlsClient(CA.issue(CLIENT), port, "homa-tcp/1")) {
                    waiting.setSoTimeout(1_000);
                    assertThrows(SocketTimeoutException.class, waiting::startHandshake,
                            "a handshake was served while 64 were under way");
                }
            } finally {
                for (Socket s : silent) {
                    s.close();
                }
            }
            byte[] req = CountingEcho.request(1, 500);
            assertArrayEquals(req, client.call(Loopback.addressOf(server), req).get(30, TimeUnit.SECONDS));
            assertEquals(1, shell(server, HomaMetrics.Shell.TLS_HANDSHAKES));
        }
    }

    /** A TCP connection to {@code port} on the loopback host from {@code address} (any of 127/8). */
    private static Socket from(String address, int port) throws IOException {
        return new Socket(InetAddress.getByName(Loopback.HOST), port, InetAddress.getByName(address), 0);
    }

    @Test
    void theCallsDeadlineBoundsItsWaitForKeys() throws Exception {
        // A TCP listener that accepts (the kernel's backlog) and never speaks TLS.
        try (ServerSocket silent = new ServerSocket(0, 8, InetAddress.getByName(Loopback.HOST));
             HomaSocket client = HomaSocket.open(Loopback.config().security(CA.security(CLIENT)).build())) {
            InetSocketAddress to = new InetSocketAddress(Loopback.HOST, silent.getLocalPort());
            CompletableFuture<byte[]> call = client.call(to, new byte[100], Duration.ofMillis(300));
            // Well before the handshake's own 10 s limit.
            ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(5, TimeUnit.SECONDS));
            assertInstanceOf(HomaTimeoutException.class, e.getCause(), () -> String.valueOf(e.getCause()));
            assertTrue(e.getCause().getMessage().contains("key exchange"), e.getCause().getMessage());
            assertEquals(0, shell(client, HomaMetrics.Shell.DATAGRAMS_SENT), "nothing of the request left");
            assertEquals(1, shell(client, HomaMetrics.Shell.CALLS_FAILED));
        }
    }

    @Test
    void preSharedKeysWithTheFallbackAreRefused() {
        HomaSecurity preShared = HomaSecurity.preSharedKeys(HomaKeyRing.of(HomaKeyRing.Cipher.AES_GCM_128, new byte[32]));
        HomaBadArgumentException e = assertThrows(HomaBadArgumentException.class,
                () -> Loopback.config().security(preShared).tcpFallback(true).build());
        assertTrue(e.getMessage().contains("plaintext"), e.getMessage());
        assertTrue(secured(CLIENT).build().tcpFallback(), "mutual TLS with the fallback is allowed");
    }

    private static long awaitRefused(HomaSocket server, long expected) {
        Loopback.await(Duration.ofSeconds(10), () -> shell(server, HomaMetrics.Shell.TLS_REFUSED) == expected,
                () -> "refusal " + expected + " not counted: " + server.metrics());
        return expected;
    }

    /** A TLS 1.3 client that trusts the test CA, presents {@code key}'s certificate (if any) and offers {@code alpn}. */
    private static SSLSocket tlsClient(KeyManager key, int port, String... alpn) throws Exception {
        SSLContext ctx = SSLContext.getInstance("TLSv1.3");
        ctx.init(key == null ? null : new KeyManager[] {key}, new TrustManager[] {CA.trustManager()}, null);
        SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket(Loopback.HOST, port);
        SSLParameters p = s.getSSLParameters();
        p.setProtocols(new String[] {"TLSv1.3"});
        if (alpn.length > 0) {
            p.setApplicationProtocols(alpn);
        }
        s.setSSLParameters(p);
        return s;
    }

    /**
     * A well-formed fallback request (call 1, RPC id 0, UDP port 9, age 0, 3 bytes): a server that
     * served the connection would answer it.
     */
    private static byte[] requestFrame() {
        return java.nio.ByteBuffer.allocate(4 + 27 + 3).putInt(27 + 3).put((byte) 1).putLong(1).putLong(0)
                .putShort((short) 9).putLong(0).put(new byte[] {'a', 'b', 'c'}).array();
    }

    /** The server closes {@code s} (an end of stream or a TLS alert) after a request, rather than serve it. */
    private static void assertClosed(Socket s) throws IOException {
        s.setSoTimeout(10_000);
        try {
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            if (s instanceof SSLSocket tls) {
                tls.startHandshake();
            }
            out.write(requestFrame());
            out.flush();
            int b = in.read();
            assertEquals(-1, b, "the server answered");
        } catch (SocketTimeoutException e) {
            fail("the server kept the connection open");
        } catch (IOException expected) {
            // a TLS alert or a reset: refused
        }
    }
}
