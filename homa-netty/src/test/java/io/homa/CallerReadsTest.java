package io.homa;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Caller reads ({@code HomaConfig.callerReads}, on by default on epoll): a thread blocked in a
 * call future's {@code get()} sleeps on the socket itself and handles its response on its own
 * thread, while the loop leaves the socket's data to it. Whatever ends the call (its response, its
 * deadline, a cancellation from another thread, the socket closing) wakes the waiter; a socket that
 * also serves keeps serving while its caller waits; every future completes exactly once, and no
 * two threads are ever in the engine at once. Runs on epoll, NIO and io_uring (pom executions),
 * where the last two ignore the option (the loop wakes the caller, as before).
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class CallerReadsTest {
    private static final int CALLS = 200;
    private static final long WAIT_SECONDS = 30;

    @Test
    void aWaitingCallerReadsItsOwnResponse() throws Exception {
        HomaConfig inline = Loopback.config().inlineExecution(true).build();
        try (HomaSocket s = HomaSocket.open(inline); HomaSocket c = HomaSocket.open(inline)) {
            s.serve(r -> r.reply(r.payload()));
            InetSocketAddress to = Loopback.addressOf(s);
            for (int i = 0; i < CALLS; i++) {
                byte[] request = token(1, i);
                assertArrayEquals(request, c.call(to, request).get(WAIT_SECONDS, TimeUnit.SECONDS));
                byte[] joined = token(2, i);
                assertArrayEquals(joined, c.call(to, joined).join());
            }
            Loopback.awaitIdle(c, s);
            HomaMetrics m = c.metrics();
            assertEquals(2L * CALLS, m.shell(HomaMetrics.Shell.CALLS_SUCCEEDED), m.toString());
            expectReadsWhereEpoll(c);
            expectGuarded(c, s);
        }
    }

    /**
     * With the socket's own executor, a call's future completes on the thread that waits for it
     * when that thread read the response: stages chained on it run there, never on the event loop,
     * and the executor is spared a hand-off.
     */
    @Test
    void withTheDefaultExecutorTheFutureCompletesOnTheWaitingThread() throws Exception {
        try (HomaSocket s = HomaSocket.open(Loopback.config().build()); HomaSocket c = HomaSocket.open(Loopback.config().build())) {
            s.serve(r -> r.reply(r.toByteArray()));
            InetSocketAddress to = Loopback.addressOf(s);
            Set<String> stageThreads = ConcurrentHashMap.newKeySet();
            int onCaller = 0;
            for (int i = 0; i < CALLS; i++) {
                byte[] request = token(3, i);
                CompletableFuture<byte[]> f = c.call(to, request);
                Thread[] ran = new Thread[1];
                CompletableFuture<Void> stage = f.thenRun(() -> {
                    ran[0] = Thread.currentThread();
                    stageThreads.add(Thread.currentThread().getName());
                });
                assertArrayEquals(request, f.get(WAIT_SECONDS, TimeUnit.SECONDS));
                stage.get(WAIT_SECONDS, TimeUnit.SECONDS);
                if (ran[0] == Thread.currentThread()) {
                    onCaller++;
                }
            }
            for (String name : stageThreads) {
                assertFalse(name.startsWith("homa-io-"), "a stage ran on the event loop: " + stageThreads);
            }
            HomaMetrics m = c.metrics();
            if (readsHere(c)) {
                assertTrue(onCaller > 0, "no future completed on its waiting thread: " + stageThreads + " " + m);
                assertTrue(m.shell(HomaMetrics.Shell.CALLER_COMPLETIONS) > 0, "every completion went through the executor: " + m);
                Loopback.await(Duration.ofSeconds(WAIT_SECONDS), () -> c.metrics().shell(HomaMetrics.Shell.EXECUTOR_HANDOFFS)
                        + c.metrics().shell(HomaMetrics.Shell.CALLER_COMPLETIONS) >= CALLS, c::toString);
                HomaMetrics after = c.metrics();
                assertEquals(CALLS, after.shell(HomaMetrics.Shell.EXECUTOR_HANDOFFS) + after.shell(HomaMetrics.Shell.CALLER_COMPLETIONS),
                        "each future completed once, on the executor or on its waiting thread: " + after);
            }
            expectGuarded(c, s);
        }
    }

    /** Threads that each wait for their own calls at once: one of them reads for all, the others are woken as before. */
    @Test
    void manyThreadsWaitAtOnce() throws Exception {
        int threads = 8;
        try (HomaSocket s = HomaSocket.open(Loopback.config().build()); HomaSocket c = HomaSocket.open(Loopback.config().build())) {
            s.serve(r -> r.reply(r.toByteArray()));
            InetSocketAddress to = Loopback.addressOf(s);
            List<Throwable> failures = new CopyOnWriteArrayList<>();
            List<Thread> all = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int me = t;
                Thread w = new Thread(() -> {
                    try {
                        for (int i = 0; i < CALLS; i++) {
                            byte[] request = token(10 + me, i);
                            assertArrayEquals(request, c.call(to, request).get(WAIT_SECONDS, TimeUnit.SECONDS));
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }, "waiter-" + t);
                all.add(w);
                w.start();
            }
            for (Thread w : all) {
                w.join(TimeUnit.SECONDS.toMillis(2 * WAIT_SECONDS));
                assertFalse(w.isAlive(), w.getName() + " still waiting");
            }
            assertEquals(List.of(), failures);
            Loopback.awaitIdle(c, s);
            HomaMetrics m = c.metrics();
            assertEquals((long) threads * CALLS, m.shell(HomaMetrics.Shell.CALLS_SUCCEEDED), m.toString());
            assertEquals(0, m.shell(HomaMetrics.Shell.CALLS_FAILED), m.toString());
            expectGuarded(c, s);
        }
    }

    /** A waiter whose server never answers: its deadline ends the wait, with HomaTimeoutException. */
    @Test
    void theDeadlineWakesAWaiter() throws Exception {
        try (HomaSocket s = HomaSocket.open(Loopback.config().build()); HomaSocket c = HomaSocket.open(Loopback.config().build())) {
            s.serve(r -> { }); // never replies
            CompletableFuture<byte[]> f = c.call(Loopback.addressOf(s), token(4, 0), Duration.ofMillis(200));
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(WAIT_SECONDS, TimeUnit.SECONDS));
            assertInstanceOf(HomaTimeoutException.class, e.getCause());
            expectGuarded(c, s);
        }
    }

    /** Another thread cancels the call a thread waits for: the waiter returns with the cancellation. */
    @Test
    void aCancellationWakesAWaiter() throws Exception {
        try (HomaSocket s = HomaSocket.open(Loopback.config().build()); HomaSocket c = HomaSocket.open(Loopback.config().build())) {
            CountDownLatch arrived = new CountDownLatch(1);
            s.serve(r -> arrived.countDown()); // never replies
            CompletableFuture<byte[]> f = c.call(Loopback.addressOf(s), token(5, 0));
            Waiter w = Waiter.start(() -> f.get(WAIT_SECONDS, TimeUnit.SECONDS));
            CompletableFuture<Throwable> waited = w.ended();
            // The request reached the server, so the call is in flight (the waiter may or may not sleep yet).
            assertTrue(arrived.await(WAIT_SECONDS, TimeUnit.SECONDS));
            assertTrue(f.cancel(true));
            assertInstanceOf(CancellationException.class, waited.get(WAIT_SECONDS, TimeUnit.SECONDS));
            w.thread().join();
            expectGuarded(c, s);
        }
    }

    /** The socket closes while a thread waits for a call on it: the waiter returns with HomaClosedException. */
    @Test
    void closingWakesAWaiter() throws Exception {
        try (HomaSocket s = HomaSocket.open(Loopback.config().build())) {
            HomaSocket c = HomaSocket.open(Loopback.config().build());
            CountDownLatch arrived = new CountDownLatch(1);
            s.serve(r -> arrived.countDown()); // never replies
            closeWhileWaiting(c, c.call(Loopback.addressOf(s), token(6, 0)), arrived);
        }
    }

    /**
     * A thread waits for {@code f}, whose request the server holds ({@code arrived} once it has
     * it); {@code c} closes meanwhile: the waiter returns with HomaClosedException.
     */
    private static void closeWhileWaiting(HomaSocket c, CompletableFuture<byte[]> f, CountDownLatch arrived) throws Exception {
        Waiter w = Waiter.start(() -> f.get(WAIT_SECONDS, TimeUnit.SECONDS));
        CompletableFuture<Throwable> waited = w.ended();
        assertTrue(arrived.await(WAIT_SECONDS, TimeUnit.SECONDS));
        c.close();
        Throwable t = waited.get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertInstanceOf(ExecutionException.class, t);
        assertInstanceOf(HomaClosedException.class, t.getCause());
        w.thread().join();
    }

    /**
     * A caller that spins (callerSpin of 1 s) reads its responses on the socket it learnt from
     * earlier ones, and closing the socket while it waits for a call the server holds ends the
     * wait: the waiter returns with HomaClosedException. (Whether the close comes during the spin,
     * as it almost always does, or after it, when the waiter sleeps on the sockets, is not forced:
     * both must end this way.)
     */
    @Test
    void closingEndsASpinningWaiter() throws Exception {
        try (HomaSocket s = HomaSocket.open(Loopback.config().build())) {
            HomaSocket c = HomaSocket.open(Loopback.config().callerSpin(java.time.Duration.ofSeconds(1)).build()); // the longest allowed
            try {
                closeWhileSpinning(s, c);
            } finally {
                c.close();
            }
            expectGuarded(c, s);
        }
    }

    /** Echo calls to learn the socket, then a call the server holds, and a close while its caller waits. */
    private static void closeWhileSpinning(HomaSocket s, HomaSocket c) throws Exception {
        CountDownLatch arrived = new CountDownLatch(1);
        s.serve(r -> {
            byte[] request = r.toByteArray();
            if (request[0] == 1) {
                arrived.countDown(); // never replies
            } else {
                r.reply(request);
            }
        });
        InetSocketAddress to = Loopback.addressOf(s);
        for (int i = 0; i < CALLS; i++) {
            byte[] request = token(8, i);
            assertArrayEquals(request, c.call(to, request).get(WAIT_SECONDS, TimeUnit.SECONDS));
        }
        // A spinning caller reads on a native transport (on io_uring beside the loop); on NIO it cannot.
        long reads = c.metrics().shell(HomaMetrics.Shell.CALLER_READS);
        if ("nio".equals(c.metrics().transport())) {
            assertEquals(0, reads, c.metrics().toString());
        } else {
            assertTrue(reads > 0, "no spinning caller read its own response: " + c.metrics());
        }
        byte[] held = token(8, CALLS);
        held[0] = 1;
        closeWhileWaiting(c, c.call(to, held), arrived);
    }

    /**
     * A socket that serves too keeps serving while its caller waits: a calls b, whose handler first
     * calls back a before it replies. The request for a arrives while a's caller waits on a's
     * sockets, and is served.
     */
    @Test
    void aSocketKeepsServingWhileItsCallerWaits() throws Exception {
        try (HomaSocket a = HomaSocket.open(Loopback.config().build()); HomaSocket b = HomaSocket.open(Loopback.config().build())) {
            InetSocketAddress toA = Loopback.addressOf(a);
            a.serve(r -> r.reply(r.toByteArray()));
            b.serve(r -> {
                byte[] request = r.toByteArray();
                try {
                    r.reply(b.call(toA, request).get(WAIT_SECONDS, TimeUnit.SECONDS));
                } catch (Exception e) {
                    r.reply(new byte[0]); // a wrong echo: the caller's check fails
                }
            });
            InetSocketAddress toB = Loopback.addressOf(b);
            for (int i = 0; i < CALLS; i++) {
                byte[] request = token(7, i);
                assertArrayEquals(request, a.call(toB, request).get(WAIT_SECONDS, TimeUnit.SECONDS));
            }
            Loopback.awaitIdle(a, b);
            assertEquals(CALLS, a.metrics().shell(HomaMetrics.Shell.REQUESTS_REPLIED), a.metrics().toString());
            expectGuarded(a, b);
        }
    }

    /**
     * A future completed by a path that kicks nobody ({@code obtrudeValue} bypasses the call's
     * own completion), for a call to a server that never answers: an untimed {@code join()} still
     * returns (a reader looks at its future again every few milliseconds, and the RPC's own
     * failure for silence kicks it at the latest).
     */
    @Test
    void anObtrudedFutureEndsAnUntimedWait() throws Exception {
        // A silent server (a UDP socket nobody reads): no datagram ever wakes the waiter.
        try (java.net.DatagramSocket silent = new java.net.DatagramSocket(0, java.net.InetAddress.getLoopbackAddress());
             HomaSocket c = HomaSocket.open(Loopback.config().build())) {
            CompletableFuture<byte[]> f = c.call(new InetSocketAddress(silent.getLocalAddress(), silent.getLocalPort()),
                    token(9, 0), Duration.ofSeconds(4 * WAIT_SECONDS));
            CountDownLatch joining = new CountDownLatch(1);
            CompletableFuture<byte[]> joined = CompletableFuture.supplyAsync(() -> {
                joining.countDown();
                return f.join();
            }, runnable -> new Thread(runnable, "joiner").start());
            assertTrue(joining.await(WAIT_SECONDS, TimeUnit.SECONDS));
            byte[] value = {42};
            f.obtrudeValue(value); // whether the joiner sleeps yet or not, it must see this
            assertArrayEquals(value, joined.get(WAIT_SECONDS, TimeUnit.SECONDS));
            f.cancel(true); // the RPC itself still runs: end it
            expectGuarded(c);
        }
    }

    /** Two threads wait for the same future: one reads, the other parks; both get the response, once. */
    @Test
    void twoThreadsWaitForOneFuture() throws Exception {
        try (HomaSocket s = HomaSocket.open(Loopback.config().build()); HomaSocket c = HomaSocket.open(Loopback.config().build())) {
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch arrived = new CountDownLatch(1);
            s.serve(r -> {
                arrived.countDown();
                try {
                    release.await(WAIT_SECONDS, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                r.reply(r.toByteArray());
            });
            byte[] request = token(10, 0);
            CompletableFuture<byte[]> f = c.call(Loopback.addressOf(s), request);
            List<CompletableFuture<byte[]>> waiters = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                waiters.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return f.get(WAIT_SECONDS, TimeUnit.SECONDS);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }, runnable -> new Thread(runnable, "waiter").start()));
            }
            assertTrue(arrived.await(WAIT_SECONDS, TimeUnit.SECONDS));
            release.countDown();
            for (CompletableFuture<byte[]> w : waiters) {
                assertArrayEquals(request, w.get(WAIT_SECONDS, TimeUnit.SECONDS));
            }
            Loopback.awaitIdle(c, s);
            assertEquals(1, c.metrics().shell(HomaMetrics.Shell.CALLS_SUCCEEDED), c.metrics().toString());
            expectGuarded(c, s);
        }
    }

    /**
     * A stage chained on a call waits for another call of the same socket: it runs once the
     * waiter gave the sockets back, so the second response is read (by the loop or by the stage's
     * own wait) and the stage ends long before any deadline.
     */
    @Test
    void aStageThatWaitsForAnotherCallIsServed() throws Exception {
        try (HomaSocket s = HomaSocket.open(Loopback.config().build());
             HomaSocket c = HomaSocket.open(Loopback.config().defaultDeadline(Duration.ofSeconds(WAIT_SECONDS)).build())) {
            s.serve(r -> r.reply(r.toByteArray()));
            InetSocketAddress to = Loopback.addressOf(s);
            for (int i = 0; i < 20; i++) {
                byte[] first = token(11, i);
                byte[] second = token(12, i);
                CompletableFuture<byte[]> f = c.call(to, first);
                CompletableFuture<byte[]> chained = f.thenApply(r -> c.call(to, second).join());
                assertArrayEquals(first, f.get(WAIT_SECONDS, TimeUnit.SECONDS));
                assertArrayEquals(second, chained.get(WAIT_SECONDS, TimeUnit.SECONDS));
            }
            expectGuarded(c, s);
        }
    }

    /** A waiter interrupted while it waits returns with InterruptedException, as get() promises. */
    @Test
    void anInterruptEndsTheWait() throws Exception {
        try (HomaSocket s = HomaSocket.open(Loopback.config().build()); HomaSocket c = HomaSocket.open(Loopback.config().build())) {
            CountDownLatch arrived = new CountDownLatch(1);
            s.serve(r -> arrived.countDown()); // never replies
            CompletableFuture<byte[]> f = c.call(Loopback.addressOf(s), token(13, 0));
            Waiter w = Waiter.start(f::get);
            CompletableFuture<Throwable> waited = w.ended();
            assertTrue(arrived.await(WAIT_SECONDS, TimeUnit.SECONDS));
            w.thread().interrupt();
            assertInstanceOf(InterruptedException.class, waited.get(WAIT_SECONDS, TimeUnit.SECONDS));
            w.thread().join();
            f.cancel(true);
            expectGuarded(c, s);
        }
    }

    /**
     * Busy polling: a waiting caller spins as the sockets' reader and ticks the engine while its
     * loop sleeps. The engine's timer must keep serving every RPC: a call to a server that never
     * answers fails for silence (the engine's ticks) long before its deadline, both when its
     * caller waits in get() (the reader ticks) and when nobody waits (the loop, woken by its
     * watchdog, ticks again once readers stopped).
     */
    @Test
    void busyPollingReadersKeepTheEnginesTimer() throws Exception {
        HomaConfig busy = Loopback.config().inlineExecution(true).busyPoll(true).build();
        try (java.net.DatagramSocket silent = new java.net.DatagramSocket(0, java.net.InetAddress.getLoopbackAddress());
             HomaSocket s = HomaSocket.open(busy); HomaSocket c = HomaSocket.open(busy)) {
            s.serve(r -> r.reply(r.payload()));
            InetSocketAddress to = Loopback.addressOf(s);
            InetSocketAddress nobody = new InetSocketAddress(silent.getLocalAddress(), silent.getLocalPort());
            for (int i = 0; i < CALLS; i++) {
                byte[] request = token(14, i);
                assertArrayEquals(request, c.call(to, request).get(WAIT_SECONDS, TimeUnit.SECONDS));
            }
            Duration deadline = Duration.ofSeconds(4 * WAIT_SECONDS); // never the reason below
            ExecutionException waited = assertThrows(ExecutionException.class,
                    () -> c.call(nobody, token(15, 0), deadline).get(2 * WAIT_SECONDS, TimeUnit.SECONDS));
            assertInstanceOf(HomaTimeoutException.class, waited.getCause());
            assertTrue(waited.getCause().getMessage().contains("silent"), waited.getCause().getMessage());
            CompletableFuture<Throwable> unwatched = new CompletableFuture<>();
            c.call(nobody, token(15, 1), deadline).whenComplete((v, e) -> unwatched.complete(e));
            Loopback.await(Duration.ofSeconds(2 * WAIT_SECONDS), unwatched::isDone, () -> "no tick failed the unwatched call: " + c.metrics());
            Throwable e = unwatched.getNow(null);
            assertInstanceOf(HomaTimeoutException.class, e);
            assertTrue(e.getMessage().contains("silent"), e.getMessage());
            if (readsHere(c)) {
                assertTrue(c.metrics().shell(HomaMetrics.Shell.CALLER_READS) > 0, c.metrics().toString());
            }
            expectGuarded(c, s);
        }
    }

    @Test
    void withoutCallerReadsTheLoopReads() throws Exception {
        HomaConfig off = Loopback.config().inlineExecution(true).callerReads(false).build();
        try (HomaSocket s = HomaSocket.open(off); HomaSocket c = HomaSocket.open(off)) {
            s.serve(r -> r.reply(r.payload()));
            InetSocketAddress to = Loopback.addressOf(s);
            for (int i = 0; i < CALLS; i++) {
                byte[] request = token(8, i);
                assertArrayEquals(request, c.call(to, request).get(WAIT_SECONDS, TimeUnit.SECONDS));
            }
            assertEquals(0, c.metrics().shell(HomaMetrics.Shell.CALLER_READS), c.metrics().toString());
            assertFalse(off.callerReads());
            assertTrue(HomaConfig.defaults().callerReads(), "on by default");
            expectGuarded(c, s);
        }
    }

    /** A thread that waits for a call (its {@code waitFor}) and records how the wait ended: null, or what it threw. */
    private record Waiter(Thread thread, CompletableFuture<Throwable> ended) {
        static Waiter start(java.util.concurrent.Callable<?> waitFor) {
            CompletableFuture<Throwable> ended = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                try {
                    waitFor.call();
                    ended.complete(null);
                } catch (Throwable e) {
                    ended.complete(e);
                }
            }, "waiter");
            t.start();
            return new Waiter(t, ended);
        }
    }

    private static byte[] token(int who, int i) {
        return ByteBuffer.allocate(100).putInt(who).putInt(i).array();
    }

    /** Whether callers read here: epoll only (NIO and io_uring ignore the option). */
    private static boolean readsHere(HomaSocket s) {
        return "epoll".equals(s.metrics().transport());
    }

    private static void expectReadsWhereEpoll(HomaSocket s) {
        long reads = s.metrics().shell(HomaMetrics.Shell.CALLER_READS);
        if (readsHere(s)) {
            assertTrue(reads > 0, "no caller read its own response: " + s.metrics());
        } else {
            assertEquals(0, reads, "callerReads is for epoll alone: " + s.metrics());
        }
    }

    private static void expectGuarded(HomaSocket... sockets) {
        for (HomaSocket s : sockets) {
            assertEquals(0, Loopback.shellOf(s).unguardedEntries(), s + ": engine entered without its lock");
        }
    }
}
