package io.homa;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.channels.DatagramChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Thread hand-offs per call, counted (never timed) by the shell's {@code LOOP_HANDOFFS} and
 * {@code EXECUTOR_HANDOFFS}, for each place user code can run (docs/netty.md, "Threads and
 * hand-offs"). Calls go one at a time, so no hand-off can carry two of them.
 */
class HandOffTest {
    private static final int CALLS = 200;
    private static final byte[] REQUEST = new byte[100];

    /**
     * Default executor: four per call. Client: caller into its loop, loop to the executor that
     * completes the future. Server: loop to the handler's thread, the handler's reply back into
     * the loop.
     */
    @Test
    void theDefaultExecutorCostsFourHandOffsPerCall() throws Exception {
        HomaConfig config = Loopback.config().build();
        try (HomaSocket server = HomaSocket.open(config); HomaSocket client = HomaSocket.open(config)) {
            server.serve(r -> r.reply(r.toByteArray()));
            callOneByOne(client, Loopback.addressOf(server));
            expectHandOffs(client, CALLS, CALLS);
            expectHandOffs(server, CALLS, CALLS);
        }
    }

    /** Inline execution: one per call, the caller's into the client's loop; the server hands nothing off. */
    @Test
    void inlineExecutionCostsOneHandOffPerCall() throws Exception {
        HomaConfig config = Loopback.config().inlineExecution(true).build();
        try (HomaSocket server = HomaSocket.open(config); HomaSocket client = HomaSocket.open(config)) {
            server.serve(r -> r.reply(r.toByteArray()));
            callOneByOne(client, Loopback.addressOf(server));
            expectHandOffs(client, CALLS, 0);
            expectHandOffs(server, 0, 0);
        }
    }

    /**
     * A call made on one of the socket's own loops (here from an inline completion stage, on a
     * socket with two loops) runs on that loop: no hand-off at all, where taking the next loop in
     * turn would wake the other one for every second call. Every call goes to a UDP port that is
     * bound but never read, so no datagram comes back (none can arrive on the other loop and be
     * passed over): the first call fails on its loop (the peer stays silent), and its stage makes the rest.
     */
    @Test
    void callsMadeOnTheSocketsOwnLoopHandNothingOff() throws Exception {
        try (HomaSocket client = HomaSocket.open(Loopback.config().inlineExecution(true).eventLoops(2).build());
             DatagramChannel silent = DatagramChannel.open(StandardProtocolFamily.INET)) {
            silent.bind(new InetSocketAddress(Loopback.HOST, 0));
            InetSocketAddress nowhere = (InetSocketAddress) silent.getLocalAddress();
            // Long enough for the stage to be chained before the call fails (else it would run here, and fail).
            CompletableFuture<byte[]> first = client.call(nowhere, REQUEST, Duration.ofSeconds(2));
            CompletableFuture<List<CompletableFuture<byte[]>>> chained = first.handle((response, error) -> {
                assertTrue(Thread.currentThread().getName().startsWith("homa-io-"),
                        "the stage runs on the client's loop, not " + Thread.currentThread().getName());
                List<CompletableFuture<byte[]>> calls = new ArrayList<>();
                for (int i = 0; i < CALLS; i++) {
                    calls.add(client.call(nowhere, REQUEST, Duration.ofMillis(300)));
                }
                return calls;
            });
            for (CompletableFuture<byte[]> c : chained.get(30, TimeUnit.SECONDS)) {
                ExecutionException e = assertThrows(ExecutionException.class, () -> c.get(30, TimeUnit.SECONDS));
                assertInstanceOf(HomaTimeoutException.class, e.getCause());
            }
            HomaMetrics m = client.metrics();
            assertEquals(CALLS + 1, m.shell(HomaMetrics.Shell.CALLS_FAILED), m.toString());
            assertEquals(0, m.shell(HomaMetrics.Shell.DATAGRAMS_RECEIVED), m.toString());
            assertEquals(1, m.shell(HomaMetrics.Shell.LOOP_HANDOFFS), "only the first call, from this thread: " + m);
            assertEquals(0, m.shell(HomaMetrics.Shell.EXECUTOR_HANDOFFS), m.toString());
        }
    }

    private static void callOneByOne(HomaSocket client, InetSocketAddress to) throws Exception {
        for (int i = 0; i < CALLS; i++) {
            client.call(to, REQUEST).get(30, TimeUnit.SECONDS);
        }
    }

    /**
     * Waits until the socket's hand-off counters reach what {@code CALLS} calls should cost (the
     * server counts its last reply's hand-off on its own thread), then checks that they stopped there.
     */
    private static void expectHandOffs(HomaSocket s, long loop, long executor) {
        Loopback.await(Duration.ofSeconds(10), () -> {
            HomaMetrics m = s.metrics();
            return m.shell(HomaMetrics.Shell.LOOP_HANDOFFS) >= loop
                    && m.shell(HomaMetrics.Shell.EXECUTOR_HANDOFFS) >= executor;
        }, () -> s + " " + s.metrics());
        HomaMetrics m = s.metrics();
        assertEquals(loop, m.shell(HomaMetrics.Shell.LOOP_HANDOFFS), "loop hand-offs of " + s + ": " + m);
        assertEquals(executor, m.shell(HomaMetrics.Shell.EXECUTOR_HANDOFFS), "executor hand-offs of " + s + ": " + m);
    }
}
