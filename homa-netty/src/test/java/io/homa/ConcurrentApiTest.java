package io.homa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The public API from many threads at once: 8 threads call (byte[] and ByteBuf), reply to the
 * requests the handler hands them (each request offered to two threads, so that replies race),
 * and at the end close the server and the client (two event loops each) while the others go on
 * calling. Every future completes, once, with its own bytes or a HomaException; every request
 * gets at most one reply (the loser of a race gets IllegalStateException, and its buffer is
 * released); nothing is thrown out of an event loop (no I/O error, no uncaught exception); no
 * buffer leaks (LeakCheck) and no Homa thread survives the close.
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class ConcurrentApiTest {
    private static final int THREADS = 8;
    /** Calls completed before the two closing threads close the sockets (or {@link #MAX_TRAFFIC} passed). */
    private static final int BEFORE_CLOSE = 2_000;
    private static final Duration MAX_TRAFFIC = Duration.ofSeconds(20);
    private static final Duration AFTER_CLOSE = Duration.ofMillis(300);
    /** Calls one thread keeps in flight. */
    private static final int WINDOW = 50;

    @Test
    void eightThreadsCallReplyAndCloseAtOnce() throws Exception {
        Set<String> threadsBefore = Loopback.homaThreads();
        List<Throwable> uncaught = new java.util.concurrent.CopyOnWriteArrayList<>();
        Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> uncaught.add(e));
        HomaSocket server = HomaSocket.open(Loopback.config().eventLoops(2).build());
        HomaSocket client = HomaSocket.open(Loopback.config().eventLoops(2).build());
        try {
            Queue<HomaRequest> toAnswer = new ConcurrentLinkedQueue<>();
            Map<Long, AtomicInteger> handled = new ConcurrentHashMap<>();
            server.serve(r -> {
                long token = ByteBuffer.wrap(r.toByteArray()).getLong();
                handled.computeIfAbsent(token, k -> new AtomicInteger()).incrementAndGet();
                toAnswer.add(r); // offered twice: two threads race to answer it
                toAnswer.add(r);
            });
            InetSocketAddress to = Loopback.addressOf(server);
            Map<Long, byte[]> requests = new ConcurrentHashMap<>();
            Map<Long, CompletableFuture<?>> futures = new ConcurrentHashMap<>();
            AtomicLong nextToken = new AtomicLong();
            AtomicInteger replies = new AtomicInteger();
            AtomicInteger lostRaces = new AtomicInteger();
            AtomicInteger completed = new AtomicInteger();
            AtomicLong closedAt = new AtomicLong(Long.MAX_VALUE);
            CyclicBarrier start = new CyclicBarrier(THREADS);
            long giveUp = System.nanoTime() + MAX_TRAFFIC.toNanos();
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int me = t;
                Thread w = new Thread(() -> {
                    SplittableRandom random = new SplittableRandom(me);
                    java.util.concurrent.Semaphore window = new java.util.concurrent.Semaphore(WINDOW);
                    try {
                        start.await();
                        boolean closer = me < 2;
                        while (System.nanoTime() - closedAt.get() < AFTER_CLOSE.toNanos()) {
                            if (closer && (completed.get() >= BEFORE_CLOSE || System.nanoTime() > giveUp)) {
                                closedAt.compareAndSet(Long.MAX_VALUE, System.nanoTime());
                                (me == 0 ? client : server).close(); // both at once, from two threads
                                closer = false;
                            }
                            if (!window.tryAcquire(1, TimeUnit.MILLISECONDS)) {
                                answer(toAnswer, random, replies, lostRaces);
                                continue;
                            }
                            long token = nextToken.getAndIncrement();
                            byte[] req = new byte[8 + random.nextInt(3_000)];
                            random.nextBytes(req);
                            ByteBuffer.wrap(req).putLong(token);
                            requests.put(token, req);
                            CompletableFuture<?> f;
                            if (random.nextBoolean()) {
                                f = client.call(to, req, Duration.ofSeconds(5));
                            } else {
                                ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(req.length).writeBytes(req);
                                f = client.call(to, b, Duration.ofSeconds(5));
                            }
                            futures.put(token, f);
                            f.whenComplete((v, e) -> {
                                completed.incrementAndGet();
                                window.release();
                            });
                            answer(toAnswer, random, replies, lostRaces);
                        }
                    } catch (Exception e) {
                        uncaught.add(e);
                    }
                }, "api-worker-" + t);
                workers.add(w);
                w.start();
            }
            for (Thread w : workers) {
                w.join(TimeUnit.SECONDS.toMillis(60));
                assertTrue(!w.isAlive(), w.getName() + " is stuck");
            }
            int ok = 0;
            Map<String, Integer> failures = new ConcurrentHashMap<>();
            for (Map.Entry<Long, CompletableFuture<?>> e : futures.entrySet()) {
                Object v;
                try {
                    v = e.getValue().get(20, TimeUnit.SECONDS);
                } catch (ExecutionException x) {
                    assertInstanceOf(HomaException.class, x.getCause(), "call " + e.getKey());
                    failures.merge(x.getCause().getClass().getSimpleName(), 1, Integer::sum);
                    continue;
                }
                byte[] got;
                if (v instanceof ByteBuf b) {
                    got = new byte[b.readableBytes()];
                    b.readBytes(got);
                    b.release();
                } else {
                    got = (byte[]) v;
                }
                assertArrayEquals(requests.get(e.getKey()), got, "call " + e.getKey() + " got other bytes");
                ok++;
            }
            for (Map.Entry<Long, AtomicInteger> e : handled.entrySet()) {
                assertEquals(1, e.getValue().get(), "request " + e.getKey() + " was handled twice");
            }
            assertTrue(uncaught.isEmpty(), "thrown: " + uncaught);
            assertTrue(ok > 0, "no call succeeded before the close: " + failures);
            assertTrue(failures.getOrDefault("HomaClosedException", 0) > 0, "no call saw the close: " + failures);
            assertEquals(0, server.metrics().shell(HomaMetrics.Shell.IO_ERRORS), server.metrics().toString());
            assertEquals(0, client.metrics().shell(HomaMetrics.Shell.IO_ERRORS), client.metrics().toString());
            assertEquals(futures.size(), nextToken.get(), "a call threw instead of returning a future");
            System.out.printf("concurrent API: %d calls, %d completed, failures %s, %d replies, %d lost reply races%n",
                    futures.size(), ok, failures, replies.get(), lostRaces.get());
        } finally {
            client.close();
            server.close();
            Thread.setDefaultUncaughtExceptionHandler(previous);
        }
        Set<String> left = Loopback.homaThreads();
        left.removeAll(threadsBefore);
        if (!left.isEmpty()) {
            fail("threads left after close: " + left);
        }
    }

    /** Answers every request waiting, as bytes or as a buffer; a request answered or dropped already throws. */
    private static void answer(Queue<HomaRequest> toAnswer, SplittableRandom random, AtomicInteger replies,
                               AtomicInteger lostRaces) {
        HomaRequest r;
        while ((r = toAnswer.poll()) != null) {
            try {
                if (random.nextBoolean()) {
                    r.reply(r.toByteArray());
                } else {
                    byte[] bytes = r.toByteArray(); // first: it throws once the request is answered
                    r.reply(PooledByteBufAllocator.DEFAULT.directBuffer(bytes.length).writeBytes(bytes));
                }
                replies.incrementAndGet();
            } catch (IllegalStateException e) {
                lostRaces.incrementAndGet(); // answered already by another thread
            }
        }
    }
}
