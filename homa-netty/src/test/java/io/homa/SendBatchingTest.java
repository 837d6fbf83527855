package io.homa;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Sends batched across calls: a burst of small calls made at once leaves in few system calls
 * ({@code SEND_CALLS} against {@code DATAGRAMS_SENT}): to one peer as GSO sends of many requests
 * when GSO is on, to many peers as one {@code sendmmsg} per loop turn, and replies to many clients
 * likewise. Whatever the batching, every call completes exactly once with its own echo, also when
 * a relay drops datagrams of those batches one by one after the sender's kernel split them.
 *
 * <p>The batches form when calls come faster than the loop's turns: the first call of a burst runs
 * as its caller's own turn (the engine is idle), the rest are queued while the loop is at work, and
 * its next turn takes all that is queued. So that this does not depend on how fast this thread
 * is against the loop, each burst is made while the client's loop is held busy (its inline
 * handler blocks on a request from another socket, {@link #holdingLoop}), and let go after the
 * burst: the queued calls then leave in one turn. On epoll a flush is one {@code sendmmsg}; NIO
 * sends each datagram by a call of its own (so there the two counters agree, which is checked too),
 * io_uring submits each packet (only GSO batches there).
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class SendBatchingTest {
    private static final int BURST = 256;
    private static final int SIZE = 100;
    private static final long WAIT_SECONDS = 60;

    @ParameterizedTest(name = "gso={0}")
    @ValueSource(booleans = {true, false})
    void aBurstToOnePeerLeavesInBatches(boolean gso) throws Exception {
        try (HomaSocket server = HomaSocket.open(Loopback.config().gso(gso).build());
             HomaSocket client = HomaSocket.open(clientConfig().gso(gso).build())) {
            Handled handled = Handled.echoing(server);
            burst(client, List.of(Loopback.addressOf(server)));
            Loopback.awaitIdle(client, server);
            assertEquals(BURST, handled.runs.get(), "each request handled once");
            assertEquals(BURST, handled.ids.size());
            expectBatched(client.metrics(), gso);
        }
    }

    /** Loss after the kernel split the GSO sends: each lost request or response comes again, once. */
    @Test
    void aBurstThroughLossCompletesEveryCallOnce() throws Exception {
        try (HomaSocket server = HomaSocket.open(Loopback.config().build());
             HomaSocket client = HomaSocket.open(clientConfig().build())) {
            Handled handled = Handled.echoing(server);
            try (LossyRelay relay = new LossyRelay(Loopback.addressOf(server), 0.05, 27)) {
                burst(client, List.of(relay.address()));
                Loopback.awaitIdle(client, server);
                assertTrue(relay.dropped() > 0, "the relay dropped nothing: " + relay.passed() + " passed");
            }
            assertEquals(BURST, handled.ids.size(), "every request reached the handler");
            assertEquals(BURST, handled.runs.get(), "no request handled twice");
            HomaMetrics c = client.metrics();
            assertTrue(c.retransmissions() + server.metrics().retransmissions() > 0,
                    "the losses were repaired by retransmission: " + c + " / " + server.metrics());
            expectBatched(c, true);
        }
    }

    /** Calls to four servers at once, and four clients' calls to one server: one sendmmsg per turn for all peers. */
    @Test
    void burstsToAndFromManyPeersShareSystemCalls() throws Exception {
        List<HomaSocket> sockets = new ArrayList<>();
        try {
            List<InetSocketAddress> servers = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                HomaSocket s = HomaSocket.open(Loopback.config().build());
                sockets.add(s);
                s.serve(r -> r.reply(r.toByteArray()));
                servers.add(Loopback.addressOf(s));
            }
            HomaSocket client = HomaSocket.open(clientConfig().build());
            sockets.add(client);
            burst(client, servers);
            expectBatched(client.metrics(), true);

            // Four clients at once to the first server: its replies go to four peers per turn.
            HomaSocket server = sockets.get(0);
            List<HomaSocket> clients = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                HomaSocket c = HomaSocket.open(clientConfig().build());
                sockets.add(c);
                clients.add(c);
            }
            long sentBefore = server.metrics().shell(HomaMetrics.Shell.DATAGRAMS_SENT);
            long callsBefore = server.metrics().shell(HomaMetrics.Shell.SEND_CALLS);
            List<Thread> threads = new ArrayList<>();
            List<Throwable> failures = new CopyOnWriteArrayList<>();
            for (HomaSocket c : clients) {
                Thread t = new Thread(() -> {
                    try {
                        burst(c, List.of(servers.get(0)));
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }, "burst");
                threads.add(t);
                t.start();
            }
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(2 * WAIT_SECONDS));
            }
            assertEquals(List.of(), failures);
            HomaMetrics m = server.metrics();
            long sent = m.shell(HomaMetrics.Shell.DATAGRAMS_SENT) - sentBefore;
            long calls = m.shell(HomaMetrics.Shell.SEND_CALLS) - callsBefore;
            assertTrue(sent >= 4L * BURST, "a reply per request: " + m);
            if (m.transport().equals("epoll")) {
                assertTrue(calls < sent, "replies to four peers shared no system call: " + calls + " calls for "
                        + sent + " datagrams; " + m);
            }
        } finally {
            for (HomaSocket s : sockets) {
                s.close();
            }
        }
    }

    /** An echo handler that counts its runs and the distinct requests (by the number each carries) it saw. */
    private record Handled(Set<Integer> ids, AtomicInteger runs) {
        static Handled echoing(HomaSocket server) {
            Handled h = new Handled(ConcurrentHashMap.newKeySet(), new AtomicInteger());
            server.serve(r -> {
                h.runs.incrementAndGet();
                byte[] request = r.toByteArray();
                h.ids.add(ByteBuffer.wrap(request).getInt(0));
                r.reply(request);
            });
            return h;
        }
    }

    /** A client: inline execution, so that its handler runs on its event loop ({@link #holdingLoop}). */
    private static HomaConfig.Builder clientConfig() {
        return Loopback.config().inlineExecution(true);
    }

    /**
     * Makes {@link #BURST} calls at once from this thread, to {@code servers} in turn, while the
     * client's loop is held busy, and checks that each future completes exactly once, with its own
     * bytes.
     */
    private static void burst(HomaSocket client, List<InetSocketAddress> servers) throws Exception {
        List<byte[]> sent = new ArrayList<>();
        List<CompletableFuture<byte[]>> calls = new ArrayList<>();
        AtomicInteger completions = new AtomicInteger();
        try (Held held = holdingLoop(client)) {
            for (int i = 0; i < BURST; i++) {
                byte[] request = new byte[SIZE];
                Arrays.fill(request, (byte) i);
                ByteBuffer.wrap(request).putInt(0, i);
                sent.add(request);
                CompletableFuture<byte[]> f = client.call(servers.get(i % servers.size()), request);
                f.whenComplete((v, e) -> completions.incrementAndGet());
                calls.add(f);
            }
            held.letGo();
            for (int i = 0; i < BURST; i++) {
                assertArrayEquals(sent.get(i), calls.get(i).get(WAIT_SECONDS, TimeUnit.SECONDS), "echo of call " + i);
            }
        }
        Loopback.await(Duration.ofSeconds(10), () -> completions.get() >= BURST, completions::toString);
        assertEquals(BURST, completions.get(), "each future completed once");
    }

    /**
     * Holds {@code client}'s event loop busy until {@link Held#letGo}: another socket calls it,
     * and its handler (inline execution: on the loop) waits for the release. Returns once the
     * handler runs. The other socket never times the silent client out meanwhile.
     */
    private static Held holdingLoop(HomaSocket client) throws Exception {
        java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        client.serve(r -> {
            entered.countDown();
            try {
                assertTrue(release.await(WAIT_SECONDS, TimeUnit.SECONDS), "the burst ended");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            r.reply(new byte[1]);
        });
        HomaSocket holder = HomaSocket.open(Loopback.config().timeoutTicks(60_000).build());
        Held held = new Held(client, holder, release, holder.call(Loopback.addressOf(client), new byte[1]));
        try {
            // (No metrics in the message: they would wait for the loop this holds.)
            assertTrue(entered.await(WAIT_SECONDS, TimeUnit.SECONDS), "the client's handler ran");
        } catch (Throwable t) {
            held.close();
            throw t;
        }
        return held;
    }

    /** A client's loop held by its handler ({@link #holdingLoop}). */
    private record Held(HomaSocket client, HomaSocket holder, java.util.concurrent.CountDownLatch release,
                        CompletableFuture<byte[]> hold) implements AutoCloseable {
        /** Lets the handler answer, and checks the answer came. */
        void letGo() throws Exception {
            release.countDown();
            assertEquals(1, hold.get(WAIT_SECONDS, TimeUnit.SECONDS).length);
        }

        /** Lets the handler go (if not yet), and closes the other socket once the client is idle (its answer acknowledged). */
        @Override
        public void close() {
            release.countDown();
            try {
                Loopback.awaitIdle(client);
            } finally {
                holder.close();
            }
        }
    }

    /**
     * The client's sends were batched: on epoll, fewer system calls than datagrams (at least two
     * datagrams a call on average), GSO sends of several requests only with GSO on; on NIO a call per
     * datagram; on io_uring batches only through GSO.
     */
    private static void expectBatched(HomaMetrics m, boolean gso) {
        long datagrams = m.shell(HomaMetrics.Shell.DATAGRAMS_SENT);
        long calls = m.shell(HomaMetrics.Shell.SEND_CALLS);
        long gsoSends = m.shell(HomaMetrics.Shell.GSO_SENDS);
        assertTrue(datagrams >= BURST, "a datagram per request at least: " + m);
        switch (m.transport()) {
            case "epoll" -> {
                assertTrue(2 * calls <= datagrams, "the burst left in " + calls + " system calls for "
                        + datagrams + " datagrams: " + m);
                assertEquals(gso, gsoSends > 0, "GSO sends with gso=" + gso + ": " + m);
            }
            case "io_uring" -> {
                assertTrue(calls <= datagrams, m.toString());
                assertEquals(gso, gsoSends > 0, "GSO sends with gso=" + gso + ": " + m);
            }
            default -> {
                assertEquals(datagrams, calls, "NIO sends each datagram by a call of its own: " + m);
                assertEquals(0, gsoSends, m.toString());
            }
        }
    }
}
