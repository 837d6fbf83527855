package io.homa;

import io.homa.HomaMetrics.Shell;
import io.homa.testing.DatagramFaults;
import io.homa.testing.FaultInjection;
import org.junit.jupiter.api.Test;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The TCP fallback in one process: a server whose Homa is off (its UDP sockets closed), paths
 * that lose every datagram one way (fault injection), a peer that answers Homa slowly, the probe
 * after the fallback period, errors over TCP and malformed frames. The kernel-level block
 * (nftables) is {@link BlockedPathTest}.
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class TcpFallbackTest {
    private static final Duration PROBE = Duration.ofMillis(100);
    /** Every datagram dropped: a path that Homa cannot use. */
    private static final DatagramFaults ALL_LOST = new DatagramFaults(1, 0, 0, Duration.ZERO);

    static HomaConfig.Builder fallback() {
        return Loopback.config().tcpFallback(true).probeInterval(PROBE);
    }

    private static Throwable failure(CompletableFuture<?> f) {
        return assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS)).getCause();
    }

    @Test
    void fallbackIsOffByDefaultAndThenNoTcpPortIsOpen() {
        assertFalse(HomaConfig.defaults().tcpFallback());
        try (HomaSocket s = HomaSocket.open(Loopback.config().build())) {
            assertThrows(IOException.class, () -> new Socket(Loopback.HOST, s.localAddress().getPort()).close());
        }
    }

    @Test
    void fallbackSettingsAreCheckedAndKept() {
        assertThrows(HomaBadArgumentException.class, () -> fallback().probeInterval(Duration.ZERO).build());
        assertThrows(HomaBadArgumentException.class, () -> fallback().probeInterval(Duration.ofMinutes(1)).build());
        assertThrows(HomaBadArgumentException.class, () -> fallback().fallbackPeriod(null).build());
        assertThrows(HomaBadArgumentException.class, () -> fallback().tcpConnectionsPerPeer(0).build());
        assertThrows(HomaBadArgumentException.class, () -> fallback().tcpIdleTimeout(Duration.ofSeconds(-1)).build());
        HomaConfig c = fallback().fallbackPeriod(Duration.ofSeconds(7)).tcpConnectionsPerPeer(3)
                .tcpIdleTimeout(Duration.ofSeconds(9)).build().toBuilder().build();
        assertTrue(c.tcpFallback());
        assertEquals(PROBE, c.probeInterval());
        assertEquals(Duration.ofSeconds(7), c.fallbackPeriod());
        assertEquals(3, c.tcpConnectionsPerPeer());
        assertEquals(Duration.ofSeconds(9), c.tcpIdleTimeout());
    }

    @Test
    void aServerWithoutHomaIsCalledOverTcp() throws Exception {
        CountingEcho echo = new CountingEcho();
        try (HomaSocket server = HomaSocket.open(fallback().build());
             HomaSocket client = HomaSocket.open(fallback().build())) {
            server.serve(echo);
            Loopback.shellOf(server).closeUdpForTests();
            InetSocketAddress to = Loopback.addressOf(server);

            long start = System.nanoTime();
            byte[] first = CountingEcho.request(0, 1_000);
            assertArrayEquals(first, client.call(to, first).get(30, TimeUnit.SECONDS));
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            // Well before Homa's silence timeout (1 s): the retry came after the probe interval.
            assertTrue(millis < 1_000, "the first call took " + millis + " ms");
            HomaMetrics m = client.metrics();
            assertEquals(1, m.shell(Shell.FALLBACKS), m.toString());
            assertEquals(1, m.shell(Shell.PEERS_ON_TCP), m.toString());

            // Now the peer is on TCP: calls go there directly, every size, many at once.
            int[] sizes = {8, 1_400, 1 << 20, 29_400_000};
            for (int i = 0; i < sizes.length; i++) {
                byte[] req = CountingEcho.request(1 + i, sizes[i]);
                assertArrayEquals(req, client.call(to, req).get(60, TimeUnit.SECONDS), "size " + sizes[i]);
            }
            List<CompletableFuture<byte[]>> burst = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                burst.add(client.call(to, CountingEcho.request(100 + i, 8 + i * 10)));
            }
            for (int i = 0; i < burst.size(); i++) {
                assertArrayEquals(CountingEcho.request(100 + i, 8 + i * 10), burst.get(i).get(30, TimeUnit.SECONDS));
            }
            int calls = 1 + sizes.length + burst.size();
            assertEquals(calls, echo.total(), "every request ran exactly once");
            assertEquals(calls, echo.distinct());
            m = client.metrics();
            assertEquals(1, m.shell(Shell.FALLBACKS), m.toString());
            assertEquals(calls, m.shell(Shell.TCP_CALLS), m.toString());
            assertEquals(calls, m.shell(Shell.CALLS_SUCCEEDED), m.toString());
            assertTrue(m.shell(Shell.TCP_CONNECTIONS_OPENED) <= HomaConfig.DEFAULT_TCP_CONNECTIONS_PER_PEER,
                    "a small pool of connections: " + m);
            HomaMetrics s = server.metrics();
            assertEquals(calls, s.shell(Shell.TCP_REQUESTS), s.toString());
            assertEquals(calls, s.shell(Shell.REQUESTS_REPLIED), s.toString());
            Loopback.awaitIdle(client);
        }
    }

    /**
     * The server gets the request over Homa, but nothing it sends comes back: the client's retry
     * over TCP names the Homa RPC, the server refuses it (it has the request), and the call ends
     * over Homa, by its timeout. The handler ran once. Later calls to that peer go over TCP.
     */
    @Test
    void aRequestTheServerGotOverHomaDoesNotRunAgainOverTcp() throws Exception {
        CountingEcho echo = new CountingEcho();
        HomaConfig deaf = FaultInjection.inject(fallback(), 5, ALL_LOST, ALL_LOST).build();
        try (HomaSocket server = HomaSocket.open(deaf); HomaSocket client = HomaSocket.open(fallback().build())) {
            server.serve(echo);
            InetSocketAddress to = Loopback.addressOf(server);
            Throwable t = failure(client.call(to, CountingEcho.request(7, 100), Duration.ofSeconds(20)));
            assertInstanceOf(HomaTimeoutException.class, t);
            assertTrue(t.getMessage().contains("received the request over Homa"), t.getMessage());
            assertEquals(1, echo.runs(7), "ran once, over Homa");
            HomaMetrics m = client.metrics();
            assertEquals(1, m.shell(Shell.FALLBACKS), m.toString());
            assertEquals(1, m.shell(Shell.FALLBACKS_REFUSED), m.toString());
            assertEquals(0, server.metrics().shell(Shell.TCP_REQUESTS), server.metrics().toString());

            byte[] next = CountingEcho.request(8, 100);
            assertArrayEquals(next, client.call(to, next).get(30, TimeUnit.SECONDS));
            assertEquals(1, echo.runs(8));
            assertEquals(1, server.metrics().shell(Shell.TCP_REQUESTS));
        }
    }

    /** Nothing the client sends over Homa arrives: the retry runs the request, once. */
    @Test
    void aRequestThatNeverArrivedOverHomaRunsOnceOverTcp() throws Exception {
        CountingEcho echo = new CountingEcho();
        HomaConfig mute = FaultInjection.inject(fallback(), 6, ALL_LOST, ALL_LOST).build();
        try (HomaSocket server = HomaSocket.open(fallback().build()); HomaSocket client = HomaSocket.open(mute)) {
            server.serve(echo);
            InetSocketAddress to = Loopback.addressOf(server);
            List<CompletableFuture<byte[]>> calls = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                calls.add(client.call(to, CountingEcho.request(i, i * 50_000)));
            }
            for (int i = 0; i < calls.size(); i++) {
                assertArrayEquals(CountingEcho.request(i, i * 50_000), calls.get(i).get(30, TimeUnit.SECONDS));
                assertEquals(1, echo.runs(i), "request " + i);
            }
            HomaMetrics m = client.metrics();
            // Each went over TCP once: as a retry, or directly once the first retry put the peer on TCP.
            assertEquals(20, m.shell(Shell.TCP_CALLS), m.toString());
            assertTrue(m.shell(Shell.FALLBACKS) >= 1, m.toString());
            assertEquals(0, m.shell(Shell.FALLBACKS_REFUSED), m.toString());
            assertEquals(0, server.metrics().shell(Shell.REQUESTS_HANDLED) - server.metrics().shell(Shell.TCP_REQUESTS));
            Loopback.awaitIdle(client);
        }
    }

    /** A server that answers Homa, however slowly its handler replies, is never called over TCP. */
    @Test
    void aPeerThatAnswersHomaIsNeverCalledOverTcp() throws Exception {
        ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
        try (HomaSocket server = HomaSocket.open(fallback().build());
             HomaSocket client = HomaSocket.open(fallback().probeInterval(Duration.ofMillis(100)).build())) {
            // Replies come 1.5 s late: fifteen probe intervals, in which the server only says BUSY,
            // to the client's RESENDs (the first after 5 ms). The interval leaves room for a loaded
            // machine: at 20 ms, two CPU hogs beside the test made the client's first RESEND (or its
            // reading of the BUSY) late enough to fall back, with or without caller turns.
            server.serve(r -> later.schedule(() -> r.reply(r.toByteArray()), 1_500, TimeUnit.MILLISECONDS));
            List<CompletableFuture<byte[]>> calls = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                calls.add(client.call(Loopback.addressOf(server), CountingEcho.request(i, 100 + i * 3_000)));
            }
            for (int i = 0; i < calls.size(); i++) {
                assertArrayEquals(CountingEcho.request(i, 100 + i * 3_000), calls.get(i).get(30, TimeUnit.SECONDS));
            }
            HomaMetrics m = client.metrics();
            assertEquals(0, m.shell(Shell.FALLBACKS), m.toString());
            assertEquals(0, m.shell(Shell.TCP_CALLS), m.toString());
            assertEquals(0, m.shell(Shell.TCP_CONNECTIONS_OPENED), m.toString());
        } finally {
            later.shutdownNow();
        }
    }

    /** After the fallback period the next call probes Homa; still silent, it falls back again. */
    @Test
    void afterTheFallbackPeriodHomaIsProbedAgain() throws Exception {
        CountingEcho echo = new CountingEcho();
        try (HomaSocket server = HomaSocket.open(fallback().build());
             HomaSocket client = HomaSocket.open(fallback().fallbackPeriod(Duration.ofMillis(200)).build())) {
            server.serve(echo);
            Loopback.shellOf(server).closeUdpForTests();
            InetSocketAddress to = Loopback.addressOf(server);
            client.call(to, CountingEcho.request(1, 10)).get(30, TimeUnit.SECONDS);
            assertEquals(1, client.metrics().shell(Shell.PEERS_ON_TCP));
            Loopback.await(Duration.ofSeconds(10), () -> client.metrics().shell(Shell.PEERS_ON_TCP) == 0,
                    () -> "the fallback period never ended: " + client.metrics());
            client.call(to, CountingEcho.request(2, 10)).get(30, TimeUnit.SECONDS);
            HomaMetrics m = client.metrics();
            assertEquals(1, m.shell(Shell.PROBES), m.toString());
            assertEquals(2, m.shell(Shell.FALLBACKS), m.toString());
            assertEquals(2, m.shell(Shell.CALLS_STARTED), "both went over Homa first: " + m);
            assertEquals(1, echo.runs(1));
            assertEquals(1, echo.runs(2));
        }
    }

    /** Over TCP a failing handler, a dropped request and a passed deadline end as they do over Homa. */
    @Test
    void errorsOverTcpAreThoseOfHoma() throws Exception {
        try (HomaSocket server = HomaSocket.open(fallback().requestTimeout(Duration.ofMillis(200)).build());
             HomaSocket client = HomaSocket.open(fallback().build())) {
            server.serve(r -> {
                switch (r.toByteArray()[0]) {
                    case 1 -> throw new IllegalStateException("handler failure on purpose");
                    case 2 -> { } // never replies
                    default -> r.reply(r.toByteArray());
                }
            });
            Loopback.shellOf(server).closeUdpForTests();
            InetSocketAddress to = Loopback.addressOf(server);
            client.call(to, new byte[]{0}).get(30, TimeUnit.SECONDS); // onto TCP
            assertInstanceOf(HomaUnknownRpcException.class, failure(client.call(to, new byte[]{1})));
            Throwable dropped = failure(client.call(to, new byte[]{2}));
            assertInstanceOf(HomaUnknownRpcException.class, dropped);
            assertTrue(dropped.getMessage().contains("request timeout"), dropped.getMessage());
            Throwable late = failure(client.call(to, new byte[]{2}, Duration.ofMillis(50)));
            assertInstanceOf(HomaTimeoutException.class, late);
            assertEquals(4, client.metrics().shell(Shell.TCP_CALLS));
            // The late call's request is dropped at its request timeout, after the caller gave up.
            Loopback.await(Duration.ofSeconds(10), () -> server.metrics().shell(Shell.REQUESTS_DROPPED) == 3,
                    () -> server.metrics().toString());
        }
    }

    /**
     * A request whose server timeout passes while it waits for the one handler thread is refused
     * unrun over TCP as over Homa: its caller, still waiting, gets HomaOverloadedException at once.
     */
    @Test
    void aRequestWhoseTimeoutPassedWhileItWaited_isRefusedOverTcpAsOverHoma() throws Exception {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        List<Integer> ran = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (HomaSocket server = HomaSocket.open(fallback().executorThreads(1).requestTimeout(Duration.ofMillis(300)).build());
             HomaSocket client = HomaSocket.open(fallback().build())) {
            server.serve(r -> {
                byte[] b = r.toByteArray();
                ran.add((int) b[0]);
                if (b[0] == 0) {
                    try {
                        release.await(); // holds the only handler thread past the next one's timeout
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                r.reply(b);
            });
            Loopback.shellOf(server).closeUdpForTests();
            InetSocketAddress to = Loopback.addressOf(server);
            client.call(to, new byte[]{2}).get(30, TimeUnit.SECONDS); // onto TCP
            CompletableFuture<byte[]> first = client.call(to, new byte[]{0}, Duration.ofSeconds(20));
            Loopback.await(Duration.ofSeconds(10), () -> ran.size() == 2, server::toString);
            Throwable refused = failure(client.call(to, new byte[]{1}, Duration.ofSeconds(20)));
            assertInstanceOf(HomaOverloadedException.class, refused);
            assertEquals(1, server.metrics().shell(Shell.REQUESTS_EXPIRED), server.metrics().toString());
            release.countDown();
            assertInstanceOf(HomaException.class, failure(first)); // its own 300 ms server timeout passed while it ran
            Loopback.await(Duration.ofSeconds(10), () -> server.metrics().shell(Shell.REQUESTS_SKIPPED) == 1,
                    () -> server.metrics().toString());
            assertEquals(List.of(2, 0), ran, "the handler ran for a request refused while it waited");
            assertEquals(3, client.metrics().shell(Shell.TCP_CALLS));
        }
    }

    /** A malformed or oversized frame closes its connection and is counted; the socket serves on. */
    @Test
    void badFramesCloseTheirConnection() throws Exception {
        try (HomaSocket server = HomaSocket.open(fallback().maxMessageLength(10_000).build());
             HomaSocket client = HomaSocket.open(fallback().build())) {
            server.serve(r -> r.reply(r.toByteArray()));
            int port = server.localAddress().getPort();
            assertClosedAfter(port, new byte[]{0, 0, 0, 1, 9}); // too short, wrong kind
            assertClosedAfter(port, new byte[]{0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff}); // 2 GB frame
            Loopback.await(Duration.ofSeconds(10), () -> server.metrics().shell(Shell.TCP_BAD_FRAMES) == 2,
                    server::toString);
            byte[] req = CountingEcho.request(1, 100);
            assertArrayEquals(req, client.call(Loopback.addressOf(server), req).get(30, TimeUnit.SECONDS));
        }
    }

    private static void assertClosedAfter(int port, byte[] bytes) throws IOException {
        try (Socket s = new Socket(Loopback.HOST, port)) {
            s.setSoTimeout(10_000);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.write(bytes);
            out.flush();
            InputStream in = s.getInputStream();
            assertEquals(-1, in.read(), "the server closed the connection");
        }
    }
}
