package io.homa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Handlers that throw, never reply, reply late or from other threads. */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class HandlerTest {
    private static Throwable failure(CompletableFuture<?> f) {
        return assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS)).getCause();
    }

    @Test
    void aHandlerThatThrowsLeaksNothingAndItsCallerFails() throws Exception {
        AtomicInteger invocations = new AtomicInteger();
        try (HomaSocket server = HomaSocket.open(Loopback.config().build());
             HomaSocket client = HomaSocket.open(Loopback.config().build())) {
            server.serve(r -> {
                invocations.incrementAndGet();
                throw new IllegalStateException("handler bug (on purpose)");
            });
            Throwable t = failure(client.call(Loopback.addressOf(server), new byte[100], Duration.ofSeconds(20)));
            // Unknown to the server after its retries; or, when the client cannot rule out that the
            // server started after the request went out (its bound on the server's start is the
            // answer's arrival less the uptime it gave, so a late event loop on either side moves it
            // later, and this server started moments before the call), outcome unknown: the
            // conservative verdict, never a second run (issue 25; seen once on JDK 25).
            assertTrue(t instanceof HomaUnknownRpcException || t instanceof HomaOutcomeUnknownException,
                    "unknown RPC or outcome unknown, was " + t);
            assertEquals(1, invocations.get(), "the client's retries must not run the handler again");
            Loopback.awaitIdle(client, server);
            // The client sends the request again until it gives up; each retry is dropped unseen.
            assertTrue(server.metrics().shell(HomaMetrics.Shell.REQUESTS_DROPPED) >= 1);
        }
    }

    @Test
    void aHandlerThatNeverRepliesLeaksNothingAndItsCallerTimesOut() throws Exception {
        AtomicReference<HomaRequest> kept = new AtomicReference<>();
        HomaConfig serverConfig = Loopback.config().requestTimeout(Duration.ofMillis(500)).build();
        try (HomaSocket server = HomaSocket.open(serverConfig);
             HomaSocket client = HomaSocket.open(Loopback.config().build())) {
            server.serve(kept::set);
            Throwable t = failure(client.call(Loopback.addressOf(server), new byte[100], Duration.ofMillis(200)));
            assertInstanceOf(HomaTimeoutException.class, t);
            // The server drops the request at the caller's deadline (200 ms, which it sent with the
            // request), or on the caller's CANCEL, whichever comes first. Both deadlines fall at
            // about the same time: a RESEND the client sends in between finds the request gone, and
            // the copy the client then sends again is dropped too (the server remembers what it
            // dropped), never handed to the handler a second time.
            Loopback.awaitIdle(client, server);
            HomaMetrics m = server.metrics();
            assertEquals(1, m.shell(HomaMetrics.Shell.REQUESTS_HANDLED), "the handler ran once: " + m);
            long ended = m.shell(HomaMetrics.Shell.REQUESTS_DROPPED) + m.shell(HomaMetrics.Shell.REQUESTS_CANCELLED);
            assertTrue(ended >= 1 && ended <= 2, "dropped or cancelled, at most once more for a copy sent again: " + m);
            assertFalse(kept.get().isOpen());
            kept.get().reply(new byte[1]); // too late: discarded without fuss
            ByteBuf late = PooledByteBufAllocator.DEFAULT.directBuffer(8).writeLong(1);
            kept.get().reply(late);
            assertEquals(0, late.refCnt(), "a discarded reply still releases its buffer");
        }
    }

    @Test
    void aReplyMayComeLaterFromAnotherThread() throws Exception {
        try (HomaSocket server = HomaSocket.open(Loopback.config().build());
             HomaSocket client = HomaSocket.open(Loopback.config().build())) {
            server.serve(r -> CompletableFuture.runAsync(() -> {
                byte[] in = r.toByteArray();
                byte[] out = new byte[in.length];
                for (int i = 0; i < in.length; i++) {
                    out[i] = (byte) ~in[i];
                }
                r.reply(out);
            }));
            byte[] resp = client.call(Loopback.addressOf(server), new byte[]{1, 2, 3}).get(30, TimeUnit.SECONDS);
            assertArrayEquals(new byte[]{~1, ~2, ~3}, resp);
        }
    }

    @Test
    void replyingTwiceIsAnError() throws Exception {
        CompletableFuture<Throwable> second = new CompletableFuture<>();
        try (HomaSocket server = HomaSocket.open(Loopback.config().build());
             HomaSocket client = HomaSocket.open(Loopback.config().build())) {
            server.serve(r -> {
                r.reply(new byte[]{1});
                try {
                    r.reply(new byte[]{2});
                    second.complete(null);
                } catch (Throwable t) {
                    second.complete(t);
                }
            });
            assertArrayEquals(new byte[]{1}, client.call(Loopback.addressOf(server), new byte[0]).get(30, TimeUnit.SECONDS));
            assertInstanceOf(IllegalStateException.class, second.get(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void requestsWithoutAHandlerAreDropped() throws Exception {
        try (HomaSocket server = HomaSocket.open(Loopback.config().build());
             HomaSocket client = HomaSocket.open(Loopback.config().build())) {
            // Idempotent, so that the answer does not depend on timing: the server drops the
            // request and answers the client's RESEND with "unknown, up for N ms"; a server opened
            // a moment before the call may look, to a client that read that answer late, as if it
            // had started after the request left, and a call that must not run twice would then
            // end as outcome-unknown (ServerIncarnationTest covers that rule). An idempotent call
            // is sent again until it gives up, as unknown to the server.
            Throwable t = failure(client.call(Loopback.addressOf(server), new byte[10],
                    CallOptions.DEFAULT.withDeadline(Duration.ofSeconds(20)).withIdempotent(true)));
            assertInstanceOf(HomaUnknownRpcException.class, t);
            Loopback.awaitIdle(client, server);
        }
    }

    @Test
    void aRequestDroppedBeforeServeRunsWhenItsClientSendsItAgain() throws Exception {
        // A server that opens its socket a moment before it serves (a restart, say) drops the
        // requests of that moment unrun; their clients send them again, and once it serves, the
        // copies run (before, it remembered them as dropped and refused every copy for the whole
        // retry window: the calls failed as unknown).
        try (HomaSocket server = HomaSocket.open(Loopback.config().build());
             HomaSocket client = HomaSocket.open(Loopback.config().build())) {
            byte[] request = {1, 2, 3};
            CompletableFuture<byte[]> call = client.call(Loopback.addressOf(server), request,
                    CallOptions.DEFAULT.withDeadline(Duration.ofSeconds(20)).withIdempotent(true));
            Loopback.await(Duration.ofSeconds(10), () -> server.metrics().shell(HomaMetrics.Shell.REQUESTS_DROPPED) >= 1,
                    () -> "the request dropped without a handler: " + server.metrics());
            server.serve(r -> r.reply(r.toByteArray()));
            assertArrayEquals(request, call.get(20, TimeUnit.SECONDS));
            assertEquals(1, server.metrics().shell(HomaMetrics.Shell.REQUESTS_HANDLED), "the handler ran once: " + server.metrics());
            Loopback.awaitIdle(client, server);
        }
    }

    @Test
    void inlineHandlersAndCompletionsRunOnTheEventLoop() throws Exception {
        checkThreads(Loopback.config().inlineExecution(true).build(), "homa-io-");
    }

    @Test
    void byDefaultUserCodeNeverRunsOnTheEventLoop() throws Exception {
        checkThreads(Loopback.config().build(), "homa-exec-");
    }

    /** Where the handler runs and where a stage chained on a call's future runs. */
    private static void checkThreads(HomaConfig config, String expectedPrefix) throws Exception {
        AtomicReference<String> handlerThread = new AtomicReference<>();
        CountDownLatch chained = new CountDownLatch(1);
        try (HomaSocket server = HomaSocket.open(config);
             HomaSocket slowServer = HomaSocket.open(Loopback.config().build());
             HomaSocket client = HomaSocket.open(config)) {
            server.serve(r -> {
                handlerThread.set(Thread.currentThread().getName());
                r.reply(r.toByteArray());
            });
            client.call(Loopback.addressOf(server), new byte[5]).get(30, TimeUnit.SECONDS);
            assertTrue(handlerThread.get().startsWith(expectedPrefix), handlerThread.get());
            // The reply waits until the stage is chained, so the socket (not this thread) runs it.
            slowServer.serve(r -> CompletableFuture.runAsync(() -> {
                try {
                    chained.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                r.reply(new byte[1]);
            }));
            AtomicReference<String> completionThread = new AtomicReference<>();
            CompletableFuture<Void> done = client.call(Loopback.addressOf(slowServer), new byte[5])
                    .thenRun(() -> completionThread.set(Thread.currentThread().getName()));
            chained.countDown();
            done.get(30, TimeUnit.SECONDS);
            assertTrue(completionThread.get().startsWith(expectedPrefix), completionThread.get());
        }
    }

    @Test
    void requestsOverTheQueueBoundAreRefusedUnrunAndFailFastWithOverloaded() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger ran = new AtomicInteger();
        HomaConfig serverConfig = Loopback.config().executorThreads(1).maxQueuedRequests(2).build();
        try (HomaSocket server = HomaSocket.open(serverConfig);
             HomaSocket client = HomaSocket.open(Loopback.config().build())) {
            server.serve(r -> {
                ran.incrementAndGet();
                try {
                    release.await(); // the one handler thread is stuck until the test lets it go
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                r.reply(r.toByteArray());
            });
            CompletableFuture<byte[]> running = client.call(Loopback.addressOf(server), new byte[]{0});
            Loopback.await(Duration.ofSeconds(10), () -> ran.get() == 1, server::toString);
            CompletableFuture<byte[]> queued1 = client.call(Loopback.addressOf(server), new byte[]{1});
            CompletableFuture<byte[]> queued2 = client.call(Loopback.addressOf(server), new byte[]{2});
            Loopback.await(Duration.ofSeconds(10),
                    () -> server.metrics().shell(HomaMetrics.Shell.REQUESTS_HANDLED) == 3, server::toString);
            List<CompletableFuture<byte[]>> refused = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                refused.add(client.call(Loopback.addressOf(server), new byte[]{9}, Duration.ofSeconds(20)));
            }
            for (CompletableFuture<byte[]> f : refused) {
                Throwable t = failure(f);
                assertInstanceOf(HomaOverloadedException.class, t);
                assertEquals(HomaException.Kind.OVERLOADED, ((HomaException) t).kind());
            }
            release.countDown();
            assertArrayEquals(new byte[]{0}, running.get(10, TimeUnit.SECONDS));
            assertArrayEquals(new byte[]{1}, queued1.get(10, TimeUnit.SECONDS));
            assertArrayEquals(new byte[]{2}, queued2.get(10, TimeUnit.SECONDS));
            assertEquals(3, ran.get(), "the handler ran for a refused request");
            assertEquals(5, server.metrics().shell(HomaMetrics.Shell.REQUESTS_OVERLOADED), server.metrics().toString());
            assertEquals(5, client.metrics().shell(HomaMetrics.Shell.CALLS_OVERLOADED), client.metrics().toString());
            // The refusal is the engine's OVERLOADED packet, one per refused request.
            assertEquals(5, server.metrics().packetsSent("OVERLOADED"), server.metrics().toString());
            assertEquals(5, client.metrics().packetsReceived("OVERLOADED"), client.metrics().toString());
            Loopback.awaitIdle(client, server);
        }
    }

    @Test
    void aRequestWhoseTimeoutPassedWhileItWaited_neverRuns_andItsCallerIsRefused() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        List<Integer> ran = new java.util.concurrent.CopyOnWriteArrayList<>();
        HomaConfig serverConfig = Loopback.config().executorThreads(1).requestTimeout(Duration.ofMillis(300)).build();
        try (HomaSocket server = HomaSocket.open(serverConfig);
             HomaSocket client = HomaSocket.open(Loopback.config().build())) {
            server.serve(r -> {
                byte[] b = r.toByteArray();
                ran.add((int) b[0]);
                if (b[0] == 0) {
                    try {
                        release.await(); // holds the only handler thread past the others' timeout
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                r.reply(b);
            });
            // Its own deadline (200 ms) ends its RPC before the server's timeout (300 ms) drops it
            // in its handler.
            client.call(Loopback.addressOf(server), new byte[]{0}, Duration.ofMillis(200));
            Loopback.await(Duration.ofSeconds(10), () -> ran.size() == 1, server::toString);
            CompletableFuture<byte[]> waiting = client.call(Loopback.addressOf(server), new byte[]{1}, Duration.ofSeconds(20));
            // Request 1 expires while it waits for the handler thread (the server's 300 ms timeout
            // comes before its caller's 20 s): its caller, still waiting, is told at once that it
            // did not run, instead of hearing nothing until its own deadline.
            Loopback.await(Duration.ofSeconds(10),
                    () -> server.metrics().shell(HomaMetrics.Shell.REQUESTS_EXPIRED) == 1,
                    () -> server.metrics().toString());
            assertInstanceOf(HomaOverloadedException.class, failure(waiting));
            release.countDown();
            Loopback.await(Duration.ofSeconds(10),
                    () -> server.metrics().shell(HomaMetrics.Shell.REQUESTS_SKIPPED) == 1, () -> server.metrics().toString());
            assertEquals(List.of(0), ran, "the handler ran for a request dropped while it waited");
        }
    }

    /**
     * A request a handler holds to answer later must not hold the buffer its datagram was read
     * into (with epoll, a recvmmsg batch of up to 1 MiB): from the queue of a handler thread it
     * comes in memory of its own, exactly its length. An inline handler, which runs as the request
     * arrives, gets it where it was read, with no copy (its buffer is the datagram, header and all).
     */
    @Test
    void aHeldRequest_fromTheHandlerQueue_isInMemoryOfItsOwn_inlineItIsTheDatagram() throws Exception {
        for (boolean inline : new boolean[]{false, true}) {
            List<HomaRequest> held = new ArrayList<>();
            CountDownLatch arrived = new CountDownLatch(3);
            try (HomaSocket server = HomaSocket.open(Loopback.config().inlineExecution(inline).build());
                 HomaSocket client = HomaSocket.open(Loopback.config().build())) {
                server.serve(r -> {
                    synchronized (held) {
                        held.add(r);
                    }
                    arrived.countDown();
                });
                List<CompletableFuture<byte[]>> calls = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    // Lengths that differ, so that GRO cannot coalesce them into one datagram: a
                    // request sharing a datagram gets a slice of its own length, copied or not.
                    calls.add(client.call(Loopback.addressOf(server), new byte[100 + i]));
                }
                assertTrue(arrived.await(30, TimeUnit.SECONDS));
                synchronized (held) {
                    for (HomaRequest r : held) {
                        ByteBuf payload = r.payload();
                        try {
                            if (inline) {
                                assertTrue(payload.capacity() > r.length(), "inline: the datagram itself, " + payload);
                            } else {
                                assertEquals(r.length(), payload.capacity(), "queued: a buffer of its own, " + payload);
                            }
                        } finally {
                            payload.release();
                        }
                        r.reply(r.toByteArray());
                    }
                }
                for (int i = 0; i < 3; i++) {
                    assertEquals(100 + i, calls.get(i).get(30, TimeUnit.SECONDS).length);
                }
            }
        }
    }
}
