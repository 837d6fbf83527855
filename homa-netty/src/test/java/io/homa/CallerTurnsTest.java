package io.homa;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Caller turns ({@code HomaConfig.callerSends}, on by default): a thread that calls or replies
 * runs the engine's turn itself when the loop is idle. Whatever thread starts the work (many
 * application threads at once, a handler's thread, the event loop itself, threads racing
 * {@code close()}), every future completes exactly once, with its own bytes or a HomaException,
 * and the engine is never entered by a thread that does not hold its lock (the shell counts any
 * such entry; these tests fail if one happened). Runs on epoll, NIO (where every command is handed
 * off) and io_uring (pom executions).
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class CallerTurnsTest {
    private static final int THREADS = 8;
    private static final int CALLS_PER_THREAD = 200;
    /** Calls a thread puts in flight at once before waiting, so that turns and the loop's work overlap. */
    private static final int BURST = 8;
    private static final int LONG_CALLS = 4;
    private static final long WAIT_SECONDS = 30;

    @Test
    void manyApplicationThreadsCallAtOnce() throws Exception {
        try (HomaSocket server = HomaSocket.open(Loopback.config().build());
             HomaSocket client = HomaSocket.open(Loopback.config().build())) {
            server.serve(r -> r.reply(r.toByteArray())); // replies from the executor's threads: turns of theirs
            InetSocketAddress to = Loopback.addressOf(server);
            List<Throwable> failures = new CopyOnWriteArrayList<>();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int me = t;
                Thread w = new Thread(() -> {
                    try {
                        for (int i = 0; i < CALLS_PER_THREAD; i += BURST) {
                            List<byte[]> sent = new ArrayList<>();
                            List<CompletableFuture<byte[]>> calls = new ArrayList<>();
                            for (int k = 0; k < BURST; k++) {
                                byte[] request = token(me, i + k);
                                sent.add(request);
                                calls.add(client.call(to, request));
                            }
                            for (int k = 0; k < BURST; k++) {
                                assertArrayEquals(sent.get(k), calls.get(k).get(WAIT_SECONDS, TimeUnit.SECONDS));
                            }
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }, "caller-" + t);
                threads.add(w);
                w.start();
            }
            for (Thread w : threads) {
                w.join(TimeUnit.SECONDS.toMillis(2 * WAIT_SECONDS));
                assertTrue(!w.isAlive(), w.getName() + " still calling");
            }
            assertEquals(List.of(), failures);
            long total = (long) THREADS * CALLS_PER_THREAD;
            Loopback.awaitIdle(client, server);
            HomaMetrics c = client.metrics();
            assertEquals(total, c.shell(HomaMetrics.Shell.CALLS_SUCCEEDED), c.toString());
            assertEquals(0, c.shell(HomaMetrics.Shell.CALLS_FAILED), c.toString());
            assertEquals(total, server.metrics().shell(HomaMetrics.Shell.REQUESTS_REPLIED), server.metrics().toString());
            // Under this load the engines are seldom idle, so most commands join the loops' batches
            // (caller turns are for an idle engine): no count of turns to expect here.
            expectGuarded(client, server);
        }
    }

    /** A handler (on an executor thread) calls another server and replies with its answer: two turns of that thread. */
    @Test
    void aHandlerCallsOnAndReplies() throws Exception {
        try (HomaSocket backend = HomaSocket.open(Loopback.config().build());
             HomaSocket front = HomaSocket.open(Loopback.config().build());
             HomaSocket client = HomaSocket.open(Loopback.config().build())) {
            backend.serve(r -> r.reply(r.toByteArray()));
            InetSocketAddress backendAddress = Loopback.addressOf(backend);
            front.serve(r -> {
                byte[] request = r.toByteArray();
                try {
                    r.reply(front.call(backendAddress, request).get(WAIT_SECONDS, TimeUnit.SECONDS));
                } catch (Exception e) {
                    r.reply(new byte[0]); // the client's check then fails: a wrong echo
                }
            });
            InetSocketAddress to = Loopback.addressOf(front);
            for (int i = 0; i < CALLS_PER_THREAD; i++) {
                byte[] request = token(0, i);
                assertArrayEquals(request, client.call(to, request).get(WAIT_SECONDS, TimeUnit.SECONDS));
            }
            Loopback.awaitIdle(client, front, backend);
            expectTurnsWhereNative(front);
            expectGuarded(client, front, backend);
        }
    }

    /**
     * Calls made on the event loop itself (inline completion stages, each starting the next call):
     * the loop's own turn, no lock to wait for.
     */
    @Test
    void theLoopItselfCallsOn() throws Exception {
        HomaConfig inline = Loopback.config().inlineExecution(true).build();
        try (HomaSocket server = HomaSocket.open(inline); HomaSocket client = HomaSocket.open(inline)) {
            server.serve(r -> r.reply(r.payload()));
            InetSocketAddress to = Loopback.addressOf(server);
            CompletableFuture<Integer> chain = new CompletableFuture<>();
            AtomicInteger done = new AtomicInteger();
            Runnable[] next = new Runnable[1];
            next[0] = () -> {
                int i = done.get();
                byte[] request = token(1, i);
                client.call(to, request).whenComplete((reply, error) -> {
                    if (error != null || !java.util.Arrays.equals(request, reply)) {
                        chain.completeExceptionally(error != null ? error : new AssertionError("wrong echo " + i));
                    } else if (done.incrementAndGet() == CALLS_PER_THREAD) {
                        chain.complete(done.get());
                    } else {
                        next[0].run(); // on the client's loop
                    }
                });
            };
            next[0].run();
            assertEquals(CALLS_PER_THREAD, chain.get(WAIT_SECONDS, TimeUnit.SECONDS));
            Loopback.awaitIdle(client, server);
            expectGuarded(client, server);
        }
    }

    /** Threads keep calling while another closes the client: each future ends once, with its echo or HomaClosedException. */
    @Test
    void callsRaceClose() throws Exception {
        HomaSocket server = HomaSocket.open(Loopback.config().build());
        HomaSocket client = HomaSocket.open(Loopback.config().build());
        try {
            server.serve(r -> r.reply(r.toByteArray()));
            InetSocketAddress to = Loopback.addressOf(server);
            List<Sent> all = new CopyOnWriteArrayList<>();
            AtomicInteger completions = new AtomicInteger();
            CountDownLatch someDone = new CountDownLatch(THREADS * BURST);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int me = t;
                Thread w = new Thread(() -> {
                    for (int i = 0; client.isOpen() && i < 100 * CALLS_PER_THREAD; i++) {
                        byte[] request = token(me, i);
                        CompletableFuture<byte[]> f;
                        try {
                            f = client.call(to, request);
                        } catch (RuntimeException closedMeanwhile) {
                            return; // refused at the call: nothing to complete
                        }
                        all.add(new Sent(request, f));
                        f.whenComplete((v, e) -> {
                            completions.incrementAndGet();
                            someDone.countDown();
                        });
                        try {
                            f.get(WAIT_SECONDS, TimeUnit.SECONDS);
                        } catch (Exception ignored) {
                            // checked below, future by future
                        }
                    }
                }, "racer-" + t);
                threads.add(w);
                w.start();
            }
            assertTrue(someDone.await(WAIT_SECONDS, TimeUnit.SECONDS), "calls completed before the close");
            client.close();
            for (Thread w : threads) {
                w.join(TimeUnit.SECONDS.toMillis(2 * WAIT_SECONDS));
                assertTrue(!w.isAlive(), w.getName() + " still calling");
            }
            int succeeded = 0;
            for (Sent sent : all) {
                CompletableFuture<byte[]> f = sent.future();
                assertTrue(f.isDone(), "a future never completed");
                try {
                    assertArrayEquals(sent.request(), f.get());
                    succeeded++;
                } catch (ExecutionException e) {
                    assertInstanceOf(HomaClosedException.class, e.getCause());
                }
            }
            assertTrue(succeeded >= THREADS * BURST, succeeded + " succeeded");
            assertEquals(all.size(), completions.get(), "each future completed exactly once");
            expectGuarded(client, server);
        } finally {
            client.close();
            server.close();
        }
    }

    /**
     * A caller that spins ({@code callerSpin}) reads its own response and handles it on its own
     * thread, on a socket with two loops (a response read by the wrong loop is passed to the right
     * one) and priority sockets (the response may arrive on any of them).
     */
    @Test
    void aSpinningCallerReadsItsOwnResponse() throws Exception {
        HomaConfig server = Loopback.config().inlineExecution(true).build();
        HomaConfig client = Loopback.config().inlineExecution(true).eventLoops(2).prioritySockets(true)
                .callerSpin(Duration.ofMillis(5)).build();
        try (HomaSocket s = HomaSocket.open(server); HomaSocket c = HomaSocket.open(client)) {
            s.serve(r -> r.reply(r.payload()));
            InetSocketAddress to = Loopback.addressOf(s);
            for (int i = 0; i < CALLS_PER_THREAD; i++) {
                byte[] request = token(2, i);
                assertArrayEquals(request, c.call(to, request).get(WAIT_SECONDS, TimeUnit.SECONDS));
                byte[] joined = token(3, i);
                assertArrayEquals(joined, c.call(to, joined).join());
            }
            Loopback.awaitIdle(c, s);
            HomaMetrics m = c.metrics();
            assertEquals(2L * CALLS_PER_THREAD, m.shell(HomaMetrics.Shell.CALLS_SUCCEEDED), m.toString());
            if ("nio".equals(m.transport())) {
                assertEquals(0, m.shell(HomaMetrics.Shell.CALLER_READS), "NIO ignores callerSpin: " + m);
            } else {
                assertTrue(m.shell(HomaMetrics.Shell.CALLER_READS) > 0, "no caller read its own response: " + m);
            }
            expectGuarded(c, s);
        }
    }

    /**
     * Busy polling on both sides with a spinning caller: the caller spins on the socket while its
     * loop stops reading and sleeps, and the loop reads again once the caller is done: calls whose
     * futures nobody waits on are answered as well. The server's loop, which no caller relieves,
     * spins and reads the requests itself on epoll (BUSY_POLL_READS; each request that arrives
     * between its look and its select goes through Netty's read instead, so of 208 requests some,
     * not all, are counted there).
     */
    @Test
    void busyPollingLoopsSleepWhileACallerSpins() throws Exception {
        HomaConfig busy = Loopback.config().inlineExecution(true).busyPoll(true).callerSpin(Duration.ofMillis(1)).build();
        try (HomaSocket s = HomaSocket.open(busy); HomaSocket c = HomaSocket.open(busy)) {
            s.serve(r -> r.reply(r.payload()));
            InetSocketAddress to = Loopback.addressOf(s);
            for (int i = 0; i < CALLS_PER_THREAD; i++) {
                byte[] request = token(4, i);
                assertArrayEquals(request, c.call(to, request).get(WAIT_SECONDS, TimeUnit.SECONDS));
            }
            // Now asynchronously, no caller waiting in get(): the client's loop must read the responses.
            List<CompletableFuture<byte[]>> async = new ArrayList<>();
            for (int i = 0; i < BURST; i++) {
                async.add(c.call(to, token(5, i)));
            }
            for (int i = 0; i < BURST; i++) {
                CompletableFuture<byte[]> f = async.get(i);
                Loopback.await(Duration.ofSeconds(WAIT_SECONDS), f::isDone, () -> "async call never completed: " + c.metrics());
                assertArrayEquals(token(5, i), f.getNow(null));
            }
            Loopback.awaitIdle(c, s);
            expectGuarded(c, s);
            long loopReads = s.metrics().shell(HomaMetrics.Shell.BUSY_POLL_READS);
            if ("epoll".equals(s.metrics().transport())) {
                assertTrue(loopReads > 0, "the spinning server loop never read a request itself: " + s.metrics());
                assertTrue(loopReads <= s.metrics().shell(HomaMetrics.Shell.DATAGRAMS_RECEIVED), s.metrics().toString());
            } else {
                assertEquals(0, loopReads, "busy polling reads directly on epoll alone: " + s.metrics());
            }
        }
    }

    /**
     * The default configuration: the server's loop, woken for a lone request while its engine is
     * nearly idle, reads it itself with one {@code recvfrom} on epoll (LOOP_DIRECT_READS). A long
     * message at MTU 1,500 (its first full segment read so, the rest through Netty's batched read)
     * and a burst of calls (Netty's read under load) are echoed whole as well; and all of it on a
     * secured socket, whose datagrams are opened on that path too.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void aWokenLoopReadsALoneDatagramItself(boolean secured) throws Exception {
        HomaConfig.Builder b = Loopback.config().mtu(1_500);
        if (secured) {
            b.security(HomaSecurity.preSharedKeys(HomaKeyRing.of(HomaKeyRing.Cipher.AES_GCM_128, new byte[32])));
        }
        HomaConfig config = b.build();
        try (HomaSocket s = HomaSocket.open(config); HomaSocket c = HomaSocket.open(config)) {
            // Long requests get a 1-byte reply: the server then receives no grants, so its direct
            // reads during them are the requests' own datagrams (and acknowledgements).
            s.serve(r -> {
                io.netty.buffer.ByteBuf p = r.payload();
                if (p.readableBytes() > 1_000) {
                    byte first = p.getByte(p.readerIndex());
                    p.release(); // the view is the handler's (HomaRequest.payload)
                    r.reply(new byte[] {first});
                } else {
                    r.reply(p);
                }
            });
            InetSocketAddress to = Loopback.addressOf(s);
            for (int i = 0; i < CALLS_PER_THREAD; i++) {
                byte[] request = token(6, i);
                assertArrayEquals(request, c.call(to, request).get(WAIT_SECONDS, TimeUnit.SECONDS));
            }
            long afterSmall = s.metrics().shell(HomaMetrics.Shell.LOOP_DIRECT_READS);
            byte[] longRequest = new byte[300_000];
            for (int i = 0; i < LONG_CALLS; i++) {
                java.util.Arrays.fill(longRequest, (byte) (i + 1));
                assertArrayEquals(new byte[] {(byte) (i + 1)}, c.call(to, longRequest).get(WAIT_SECONDS, TimeUnit.SECONDS));
            }
            long afterLong = s.metrics().shell(HomaMetrics.Shell.LOOP_DIRECT_READS);
            List<CompletableFuture<byte[]>> burst = new ArrayList<>();
            for (int i = 0; i < 4 * BURST; i++) {
                burst.add(c.call(to, token(7, i)));
            }
            for (int i = 0; i < burst.size(); i++) {
                assertArrayEquals(token(7, i), burst.get(i).get(WAIT_SECONDS, TimeUnit.SECONDS));
            }
            Loopback.awaitIdle(c, s);
            expectGuarded(c, s);
            HomaMetrics m = s.metrics();
            long loopReads = m.shell(HomaMetrics.Shell.LOOP_DIRECT_READS);
            if (secured) {
                assertEquals(0, m.shell(HomaMetrics.Shell.SECURITY_AUTH_FAILED) + m.shell(HomaMetrics.Shell.SECURITY_NOT_SEALED),
                        "every datagram opened: " + m);
            }
            if ("epoll".equals(m.transport())) {
                assertTrue(afterSmall > 0, "the server's loop never read a lone request itself: " + m);
                // Each long request's first segment arrives at an idle engine: read directly.
                assertTrue(afterLong - afterSmall >= LONG_CALLS, "not every long request's first segment was read directly: " + m);
                assertTrue(loopReads <= m.shell(HomaMetrics.Shell.DATAGRAMS_RECEIVED), m.toString());
            } else {
                assertEquals(0, loopReads, "the loop reads directly on epoll alone: " + m);
            }
        }
    }

    @Test
    void aBadCallerSpinIsRefused() {
        HomaBadArgumentException negative = org.junit.jupiter.api.Assertions.assertThrows(HomaBadArgumentException.class,
                () -> HomaConfig.builder().callerSpin(Duration.ofNanos(-1)));
        assertTrue(negative.getMessage().contains("callerSpin"), negative.getMessage());
        org.junit.jupiter.api.Assertions.assertThrows(HomaBadArgumentException.class,
                () -> HomaConfig.builder().callerSpin(null));
        assertEquals(Duration.ZERO, HomaConfig.defaults().callerSpin(), "no spin by default");
    }

    private record Sent(byte[] request, CompletableFuture<byte[]> future) {
    }

    private static byte[] token(int thread, int i) {
        return ByteBuffer.allocate(100).putInt(thread).putInt(i).array();
    }

    /** On a native transport caller turns happened; on NIO none (every command is handed off). */
    private static void expectTurnsWhereNative(HomaSocket s) {
        long turns = s.metrics().shell(HomaMetrics.Shell.CALLER_TURNS);
        if ("nio".equals(s.metrics().transport())) {
            assertEquals(0, turns, s.metrics().toString());
        } else {
            assertTrue(turns > 0, "no caller turn: " + s.metrics());
        }
    }

    private static void expectGuarded(HomaSocket... sockets) {
        for (HomaSocket s : sockets) {
            assertEquals(0, Loopback.shellOf(s).unguardedEntries(), s + ": engine entered without its lock");
        }
    }
}
