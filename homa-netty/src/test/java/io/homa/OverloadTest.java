package io.homa;

import io.homa.testing.DatagramFaults;
import io.homa.testing.FaultInjection;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.*;

/**
 * Issue 25 through the API: the caller's deadline reaches the handler, a request whose caller has
 * given up never reaches its handler (a CANCEL tells the server; without one, the deadline the
 * request carried does), and the metrics say which happened. The flood itself, in JVMs of their
 * own, is homa-bench's OverloadFloodTest.
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class OverloadTest {
    private static final Duration LONG = Duration.ofSeconds(20);

    @Test
    void theCallersDeadlineReachesTheHandler() throws Exception {
        AtomicReference<Duration> seen = new AtomicReference<>();
        AtomicReference<Long> deadlineNanos = new AtomicReference<>();
        try (HomaSocket server = HomaSocket.open(Loopback.config().requestTimeout(Duration.ofSeconds(60)).build());
             HomaSocket client = HomaSocket.open(Loopback.config().build())) {
            server.serve(r -> {
                seen.set(r.timeRemaining());
                deadlineNanos.set(r.deadlineNanoTime());
                r.reply(new byte[1]);
            });
            long before = System.nanoTime();
            client.call(Loopback.addressOf(server), new byte[10], Duration.ofSeconds(3)).get(10, TimeUnit.SECONDS);
            Duration left = seen.get();
            assertTrue(left.compareTo(Duration.ofSeconds(3)) <= 0, "no more than the caller gave: " + left);
            assertTrue(left.compareTo(Duration.ZERO) > 0, "some of it left: " + left);
            // Same host, same monotonic clock: the server's idea of the deadline is the client's, to
            // within the way there (and never later than the client's by more than that).
            assertTrue(deadlineNanos.get() - before <= Duration.ofSeconds(3).toNanos() + Duration.ofSeconds(1).toNanos());
        }
    }

    @Test
    void theServersRequestTimeoutCapsALongerDeadline() throws Exception {
        AtomicReference<Duration> seen = new AtomicReference<>();
        try (HomaSocket server = HomaSocket.open(Loopback.config().requestTimeout(Duration.ofSeconds(2)).build());
             HomaSocket client = HomaSocket.open(Loopback.config().build())) {
            server.serve(r -> {
                seen.set(r.timeRemaining());
                r.reply(new byte[1]);
            });
            client.call(Loopback.addressOf(server), new byte[10], Duration.ofSeconds(30)).get(10, TimeUnit.SECONDS);
            assertTrue(seen.get().compareTo(Duration.ofSeconds(2)) <= 0, seen.get().toString());
        }
    }

    /**
     * One handler thread, held by a first request; a second waits behind it. The second call is
     * cancelled by its caller: the server hears it (CANCEL), drops the waiting request, and its
     * handler never runs.
     */
    @Test
    void aCancelledCall_isDroppedFromTheServersQueue_unrun() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        List<Integer> ran = new CopyOnWriteArrayList<>();
        try (HomaSocket server = HomaSocket.open(Loopback.config().executorThreads(1).build());
             HomaSocket client = HomaSocket.open(Loopback.config().build())) {
            server.serve(holdingTheFirst(ran, release));
            CompletableFuture<byte[]> first = client.call(Loopback.addressOf(server), new byte[]{0}, LONG);
            Loopback.await(LONG, () -> ran.size() == 1, server::toString);
            CompletableFuture<byte[]> second = client.call(Loopback.addressOf(server), new byte[]{1}, LONG);
            Loopback.await(LONG, () -> server.metrics().queuedRequests() == 1, () -> server.metrics().toString());
            assertTrue(second.cancel(true));
            Loopback.await(LONG, () -> server.metrics().shell(HomaMetrics.Shell.REQUESTS_CANCELLED) == 1,
                    () -> server.metrics().toString());
            release.countDown();
            assertArrayEquals(new byte[]{0}, first.get(10, TimeUnit.SECONDS));
            Loopback.await(LONG, () -> server.metrics().shell(HomaMetrics.Shell.REQUESTS_SKIPPED) == 1,
                    () -> server.metrics().toString());
            assertEquals(List.of(0), ran, "the handler ran for a cancelled request");
            assertEquals(1, client.metrics().packetsSent("CANCEL"));
        }
    }

    /**
     * The same, but every control packet from the client is lost, its CANCEL too: the deadline the
     * request carried is what keeps its handler from starting. The server refuses it at that
     * deadline while the handler thread is still held.
     */
    @Test
    void aRequestWhoseCallerGaveUp_neverStartsItsHandler_evenWhenTheCancelIsLost() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        List<Integer> ran = new CopyOnWriteArrayList<>();
        HomaConfig lossyClient = FaultInjection.inject(Loopback.config(), 7, DatagramFaults.NONE,
                new DatagramFaults(1.0, 0, 0, Duration.ZERO)).build();
        try (HomaSocket server = HomaSocket.open(Loopback.config().executorThreads(1).build());
             HomaSocket client = HomaSocket.open(lossyClient)) {
            server.serve(holdingTheFirst(ran, release));
            // A first call warms both paths: in a fresh JVM, loading and interpreting the send and
            // read code kept the second request of its life 20-46 ms between the client writing
            // its time left and the server reading it (io_uring); the server counts from its read.
            assertArrayEquals(new byte[]{2}, client.call(Loopback.addressOf(server), new byte[]{2}, LONG)
                    .get(10, TimeUnit.SECONDS));
            CompletableFuture<byte[]> first = client.call(Loopback.addressOf(server), new byte[]{0}, LONG);
            Loopback.await(LONG, () -> ran.size() == 2, server::toString);
            CompletableFuture<byte[]> second = client.call(Loopback.addressOf(server), new byte[]{1},
                    Duration.ofMillis(300));
            Loopback.await(LONG, () -> server.metrics().queuedRequests() == 1, () -> server.metrics().toString());
            long lostBefore = client.metrics().shell(HomaMetrics.Shell.FAULTS_DROPPED);
            assertTrue(second.cancel(true)); // the caller gives up; its CANCEL is lost on the way
            Loopback.await(LONG, () -> client.metrics().packetsSent("CANCEL") == 1, () -> client.metrics().toString());
            assertTrue(client.metrics().shell(HomaMetrics.Shell.FAULTS_DROPPED) > lostBefore, "the CANCEL was not lost");
            Loopback.await(LONG, () -> server.metrics().shell(HomaMetrics.Shell.REQUESTS_EXPIRED) == 1,
                    () -> server.metrics().toString());
            release.countDown();
            assertArrayEquals(new byte[]{0}, first.get(10, TimeUnit.SECONDS));
            Loopback.await(LONG, () -> server.metrics().shell(HomaMetrics.Shell.REQUESTS_SKIPPED) == 1,
                    () -> server.metrics().toString());
            assertEquals(List.of(2, 0), ran, "the handler ran for a request whose caller had given up");
            assertEquals(0, server.metrics().shell(HomaMetrics.Shell.REQUESTS_CANCELLED), "the CANCEL was lost");
        }
    }

    @Test
    void queueSettings_areValidated_andShownInTheConfig() {
        HomaConfig c = HomaConfig.builder().queueTarget(Duration.ofMillis(7)).queueInterval(Duration.ofMillis(70)).build();
        assertEquals(Duration.ofMillis(7), c.queueTarget());
        assertEquals(Duration.ofMillis(70), c.queueInterval());
        assertEquals(HomaConfig.DEFAULT_QUEUE_TARGET, HomaConfig.defaults().queueTarget());
        assertTrue(c.toString().contains("queue(target=PT0.007S, interval=PT0.07S)"), c.toString());
        HomaBadArgumentException e = assertThrows(HomaBadArgumentException.class,
                () -> HomaConfig.builder().queueTarget(Duration.ZERO).build());
        assertTrue(e.getMessage().contains("queueTarget"), e.getMessage());
        assertThrows(HomaBadArgumentException.class, () -> HomaConfig.builder().queueInterval(null).build());
    }

    @Test
    void queueDelayQuantiles_comeFromTheHistogram() throws Exception {
        try (HomaSocket server = HomaSocket.open(Loopback.config().build());
             HomaSocket client = HomaSocket.open(Loopback.config().build())) {
            server.serve(r -> r.reply(new byte[1]));
            for (int i = 0; i < 20; i++) {
                client.call(Loopback.addressOf(server), new byte[10]).get(10, TimeUnit.SECONDS);
            }
            HomaMetrics m = server.metrics();
            assertEquals(20, java.util.Arrays.stream(m.queueDelayHistogram()).sum());
            assertTrue(m.queueDelayMicros(0.5) > 0);
            assertTrue(m.queueDelayMicros(0.5) <= m.queueDelayMicros(1.0));
            assertThrows(HomaBadArgumentException.class, () -> m.queueDelayMicros(1.5));
        }
    }

    /**
     * A handler that records the first byte of each request and holds the thread on request 0
     * until {@code release}: with one executor thread, later requests wait in the queue.
     */
    private static HomaHandler holdingTheFirst(List<Integer> ran, CountDownLatch release) {
        return r -> {
            byte[] b = r.toByteArray();
            ran.add((int) b[0]);
            if (b[0] == 0) {
                awaitQuietly(release);
            }
            r.reply(b);
        };
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
