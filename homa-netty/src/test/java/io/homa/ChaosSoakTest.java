package io.homa;

import io.homa.testing.DatagramFaults;
import io.homa.testing.FaultInjection;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.*;

/**
 * Chaos soak on real sockets: 5% drop, 1% duplication and reordering on every socket, random
 * client cancellations, and the server socket closed and reopened on the same port mid-run.
 * Every completed call must carry its own request back; every other call must fail with a
 * HomaException (or be the caller's cancellation) within its deadline; no request may reach one
 * server incarnation twice; at the end no socket holds RPC state and nothing leaked.
 *
 * <p>Short in the build ({@code homa.soak.seconds}, default 12); a longer run (epoll, then
 * again on NIO): {@code mvn -B -pl homa-netty -am test -Dhoma.fuzz.skip=true -Dtest=ChaosSoakTest
 * -Dsurefire.failIfNoSpecifiedTests=false -Dhoma.soak.seconds=600}.
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class ChaosSoakTest {
    private static final int CLIENTS = 4;
    private static final int MAX_IN_FLIGHT = 64;
    private static final Duration DEADLINE = Duration.ofSeconds(3);

    /**
     * Least share of the calls not cancelled that must complete: docs/security.md reports 97.7% to
     * 98.7% (the failures are calls caught by the server restart or by heavy loss); the margin of
     * 7 points is for a machine shared with other builds.
     */
    private static final double MIN_SUCCESS_RATE = 0.90;
    /** How late after its deadline a failed call may have failed: timer and executor scheduling on a busy machine. */
    private static final Duration FAILURE_SLACK = Duration.ofMillis(1_500);

    /** One call as the test sees it; {@code endedNanos} completes with the time its future completed. */
    private record Call(long token, byte[] request, long startedNanos, CompletableFuture<byte[]> future,
                        CompletableFuture<Long> endedNanos) {
        Call(long token, byte[] request, CompletableFuture<byte[]> future, long startedNanos) {
            this(token, request, startedNanos, future, future.handle((v, e) -> System.nanoTime()));
        }
    }

    /** What the calls that ended came to; each call is checked once, as it ends, and then forgotten. */
    private static final class Tally {
        int ok;
        int failed;
        final Map<String, Integer> failures = new TreeMap<>();

        /** Checks a call whose future is done (or waits for it, within its deadline and slack). */
        void settle(Call c) throws Exception {
            try {
                byte[] response = c.future.get(DEADLINE.toMillis() + 5_000, TimeUnit.MILLISECONDS);
                assertArrayEquals(c.request, response, "call " + c.token + " got another call's bytes");
                ok++;
            } catch (CancellationException e) {
                // the caller's own choice
            } catch (ExecutionException e) {
                assertInstanceOf(HomaException.class, e.getCause(), "call " + c.token + " failed without a HomaException");
                long took = c.endedNanos.get() - c.startedNanos; // set right as the future completed
                assertTrue(took <= DEADLINE.plus(FAILURE_SLACK).toNanos(), "call " + c.token + " failed after "
                        + took / 1_000_000 + " ms, past its deadline of " + DEADLINE + " plus " + FAILURE_SLACK
                        + ": " + e.getCause());
                failures.merge(e.getCause().getClass().getSimpleName(), 1, Integer::sum);
                failed++;
            }
        }
    }

    /**
     * An echo handler for one server incarnation, counting a token it sees twice. Each incarnation
     * has its own handler and set: a handler of the closed one still running after the restart
     * must not count its token against the new one (which may run that request legitimately, as
     * the closed one never answered).
     */
    private static HomaHandler echoCountingRepeats(AtomicLong duplicates) {
        Set<Long> handled = ConcurrentHashMap.newKeySet();
        return r -> {
            byte[] b = r.toByteArray();
            if (b.length >= 8 && !handled.add(ByteBuffer.wrap(b).getLong(0))) {
                duplicates.incrementAndGet();
            }
            r.reply(b);
        };
    }

    @Test
    void chaosSoak_everyCallCorrectOrFailedInTime_noDuplicates_noLeftovers() throws Exception {
        long seconds = Long.getLong("homa.soak.seconds", 12);
        long seed = Long.getLong("homa.soak.seed", 20261129L);
        DatagramFaults faults = new DatagramFaults(0.05, 0.01, 0.01, Duration.ofMillis(2));
        SplittableRandom random = new SplittableRandom(seed);
        AtomicLong duplicates = new AtomicLong();

        HomaSocket server = HomaSocket.open(FaultInjection.inject(Loopback.config(), seed, faults, faults).build());
        server.serve(echoCountingRepeats(duplicates));
        InetSocketAddress to = Loopback.addressOf(server);
        int port = server.localAddress().getPort();
        List<HomaSocket> clients = new ArrayList<>();
        for (int i = 0; i < CLIENTS; i++) {
            clients.add(HomaSocket.open(FaultInjection.inject(Loopback.config(), seed + 1 + i, faults, faults).build()));
        }
        List<Call> open = new ArrayList<>();
        Tally tally = new Tally();
        long token = 1;
        long start = System.nanoTime();
        long end = start + TimeUnit.SECONDS.toNanos(seconds);
        boolean restarted = false;
        int cancelled = 0;
        try {
            while (System.nanoTime() < end) {
                if (!restarted && System.nanoTime() - start > (end - start) / 2) {
                    // The server process restarts on the same port.
                    server.close();
                    server = HomaSocket.open(FaultInjection.inject(HomaConfig.builder()
                            .bindAddress(new InetSocketAddress(Loopback.HOST, port)), seed + 100, faults, faults).build());
                    server.serve(echoCountingRepeats(duplicates));
                    restarted = true;
                }
                for (var it = open.iterator(); it.hasNext(); ) {
                    Call c = it.next();
                    if (c.future.isDone()) {
                        tally.settle(c);
                        it.remove();
                    }
                }
                if (open.size() >= MAX_IN_FLIGHT) {
                    CompletableFuture.anyOf(open.stream().map(Call::future).toArray(CompletableFuture[]::new))
                            .handle((v, e) -> null).get(DEADLINE.toMillis() * 2, TimeUnit.MILLISECONDS);
                    continue;
                }
                int size = random.nextInt(10) == 0 ? 8 + random.nextInt(200_000) : 8 + random.nextInt(2_000);
                byte[] request = new byte[size];
                random.nextBytes(request);
                ByteBuffer.wrap(request).putLong(0, token);
                HomaSocket client = clients.get(random.nextInt(CLIENTS));
                long started = System.nanoTime();
                Call c = new Call(token++, request, client.call(to, request, DEADLINE), started);
                open.add(c);
                if (random.nextInt(50) == 0) { // a client gives up on some call
                    if (open.get(random.nextInt(open.size())).future.cancel(false)) {
                        cancelled++;
                    }
                }
            }
            // Every call ends by its deadline (plus scheduling slack on a busy machine).
            for (Call c : open) {
                tally.settle(c);
            }
            assertEquals(0, duplicates.get(), "a request reached one server incarnation twice");
            int decided = tally.ok + tally.failed;
            assertTrue(tally.ok >= MIN_SUCCESS_RATE * decided, tally.ok + " of " + decided
                    + " calls not cancelled completed, under " + MIN_SUCCESS_RATE * 100 + "%; failures " + tally.failures);
            assertTrue(restarted);
            final HomaSocket last = server;
            Loopback.awaitIdle(clients.toArray(new HomaSocket[0]));
            Loopback.awaitIdle(last);
            System.out.printf("chaos soak: %d s, %d calls, %d completed, %d failed %s, %d cancelled%n",
                    seconds, token - 1, tally.ok, tally.failed, tally.failures, cancelled);
        } finally {
            for (HomaSocket c : clients) {
                c.close();
            }
            server.close();
        }
    }
}
