package io.homa.internal.rpc;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

@org.junit.jupiter.api.extension.ExtendWith(io.homa.LeakCheck.class)
class CallsInFlightTest {
    private static final InetSocketAddress SERVER = new InetSocketAddress("127.0.0.1", 4000);

    private static ClientCall<byte[]> call() {
        return new ClientCall<>(SERVER, new byte[1], null, Duration.ofSeconds(1), 0, false,
                m -> new byte[0]);
    }

    @Test
    void onlyTheFirstForgetGetsTheCall() {
        CallsInFlight calls = new CallsInFlight();
        ClientCall<byte[]> c = call();
        calls.add(c);
        assertTrue(calls.contains(c));
        assertTrue(calls.forget(c));
        assertFalse(calls.forget(c));
        assertFalse(calls.contains(c));
    }

    @Test
    void closeHandsOverExactlyTheCallsNobodyForgot() {
        CallsInFlight calls = new CallsInFlight();
        List<ClientCall<byte[]>> all = new ArrayList<>();
        Random random = new Random(7);
        Set<ClientCall<?>> live = Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (int i = 0; i < 10_000; i++) {
            ClientCall<byte[]> c = call();
            calls.add(c);
            all.add(c);
            live.add(c);
            if (random.nextInt(10) < 9) { // most calls end soon, in any order
                ClientCall<byte[]> done = all.get(random.nextInt(all.size()));
                if (calls.forget(done)) {
                    live.remove(done);
                }
            }
        }
        List<ClientCall<?>> handed = new ArrayList<>();
        calls.close(handed::add);
        assertEquals(live.size(), handed.size());
        assertTrue(live.containsAll(handed));
    }

    @Test
    void endedCallsAreDroppedSoTheStackStaysNearTheLiveCount() {
        CallsInFlight calls = new CallsInFlight();
        List<ClientCall<byte[]>> window = new ArrayList<>();
        for (int i = 0; i < 100_000; i++) { // 64 outstanding, the oldest ending as a new one starts
            ClientCall<byte[]> c = call();
            calls.add(c);
            window.add(c);
            if (window.size() > 64) {
                assertTrue(calls.forget(window.remove(0)));
            }
            int linked = calls.linked();
            assertTrue(linked <= 65 + Math.max(8, 65 / 2) + 1, linked + " calls linked with 65 live");
        }
    }

    @Test
    void aBurstThatEndsIsDroppedWithoutFurtherCalls() {
        CallsInFlight calls = new CallsInFlight();
        List<ClientCall<byte[]>> burst = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            ClientCall<byte[]> c = call();
            calls.add(c);
            burst.add(c);
        }
        for (ClientCall<byte[]> c : burst) { // the socket goes quiet: no add purges any more
            assertTrue(calls.forget(c));
        }
        int linked = calls.linked();
        assertTrue(linked <= 5_000, linked + " ended calls still linked after the burst ended");
    }

    /**
     * Callers add and end calls while the socket closes, as EngineLoops.submit does: a caller that
     * finds the socket closed after its add fails the call itself; the close fails the rest. Every
     * call must end exactly once, including those a purge held while the close ran.
     */
    @Test
    void aCloseAmongConcurrentAddsAndPurgesLosesNoCall() throws Exception {
        for (int round = 0; round < 20; round++) {
            CallsInFlight calls = new CallsInFlight();
            int threads = 3;
            int perThread = 20_000;
            AtomicInteger completions = new AtomicInteger();
            Set<ClientCall<?>> completed = ConcurrentHashMap.newKeySet();
            List<ClientCall<?>> all = Collections.synchronizedList(new ArrayList<>());
            java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                long seed = round * 31L + t;
                Thread w = new Thread(() -> {
                    Random random = new Random(seed);
                    List<ClientCall<byte[]>> mine = new ArrayList<>();
                    try {
                        start.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    for (int i = 0; i < perThread; i++) {
                        ClientCall<byte[]> c = call();
                        calls.add(c);
                        all.add(c);
                        if (closed.get() && calls.forget(c)) { // as submit: closed meanwhile, fail it here
                            completed.add(c);
                            completions.incrementAndGet();
                            continue;
                        }
                        mine.add(c);
                        if (mine.size() > 32 || random.nextBoolean()) {
                            ClientCall<byte[]> done = mine.remove(random.nextInt(mine.size()));
                            if (calls.forget(done)) {
                                completed.add(done);
                                completions.incrementAndGet();
                            }
                        }
                    }
                });
                w.start();
                workers.add(w);
            }
            start.countDown();
            while (all.size() < threads * perThread / 2) {
                Thread.onSpinWait();
            }
            closed.set(true);
            calls.close(c -> {
                if (calls.forget(c)) {
                    completed.add(c);
                    completions.incrementAndGet();
                }
            });
            for (Thread w : workers) {
                w.join();
            }
            assertEquals(threads * perThread, all.size());
            assertEquals(all.size(), completed.size(), "round " + round + ": a call nobody ended");
            assertEquals(all.size(), completions.get(), "round " + round + ": a call ended twice");
        }
    }
}
