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
 * hand-offs"), with and without caller turns ({@code callerSends}: a thread that finds the loop
 * idle runs the protocol's work itself, counted as {@code CALLER_TURNS}). Calls go one at a time,
 * so no hand-off can carry two of them.
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class HandOffTest {
    private static final int CALLS = 200;
    private static final byte[] REQUEST = new byte[100];

    /**
     * Default executor, without caller turns: four per call. Client: caller into its loop, loop to
     * the executor that completes the future. Server: loop to the handler's thread, the handler's
     * reply back into the loop.
     */
    @Test
    void theDefaultExecutorCostsFourHandOffsPerCallWithoutCallerTurns() throws Exception {
        HomaConfig config = Loopback.config().callerSends(false).build();
        try (HomaSocket server = HomaSocket.open(config); HomaSocket client = HomaSocket.open(config)) {
            server.serve(r -> r.reply(r.toByteArray()));
            callOneByOne(client, Loopback.addressOf(server));
            expectHandOffs(client, CALLS, CALLS);
            expectHandOffs(server, CALLS, CALLS);
        }
    }

    /**
     * Inline execution, without caller turns: one per call, the caller's into the client's loop;
     * the server hands nothing off.
     */
    @Test
    void inlineExecutionCostsOneHandOffPerCallWithoutCallerTurns() throws Exception {
        HomaConfig config = Loopback.config().inlineExecution(true).callerSends(false).build();
        try (HomaSocket server = HomaSocket.open(config); HomaSocket client = HomaSocket.open(config)) {
            server.serve(r -> r.reply(r.toByteArray()));
            callOneByOne(client, Loopback.addressOf(server));
            expectHandOffs(client, CALLS, 0);
            expectHandOffs(server, 0, 0);
            assertEquals(0, client.metrics().shell(HomaMetrics.Shell.CALLER_TURNS), client.metrics().toString());
        }
    }

    /**
     * Default configuration (caller turns on): each call is either a turn of the caller's own,
     * which sends the request by a system call of its own and hands nothing to the loop, or, when
     * the loop is busy at that instant (still finishing the turn that completed the previous
     * call), one hand-off as before; the same for each reply from the handler's thread. How the
     * calls split between the two depends on the scheduler, so the test checks the sum, that the
     * direct route was taken, and that each caller turn sent its datagram itself.
     */
    @Test
    void aCallerTurnReplacesTheHandOffIntoTheLoop() throws Exception {
        HomaConfig config = Loopback.config().build();
        assertTrue(config.callerSends(), "on by default");
        try (HomaSocket server = HomaSocket.open(config); HomaSocket client = HomaSocket.open(config)) {
            assumeNative(client);
            server.serve(r -> r.reply(r.toByteArray()));
            callOneByOne(client, Loopback.addressOf(server));
            expectTurns(client, CALLS, CALLS);
            expectTurns(server, CALLS, CALLS);
        }
    }

    /** Inline execution with caller turns: the same on the client; the server's loop does everything. */
    @Test
    void inlineExecutionWithCallerTurns() throws Exception {
        HomaConfig config = Loopback.config().inlineExecution(true).build();
        try (HomaSocket server = HomaSocket.open(config); HomaSocket client = HomaSocket.open(config)) {
            assumeNative(client);
            server.serve(r -> r.reply(r.toByteArray()));
            callOneByOne(client, Loopback.addressOf(server));
            expectTurns(client, CALLS, 0);
            expectHandOffs(server, 0, 0);
            assertEquals(0, server.metrics().shell(HomaMetrics.Shell.CALLER_TURNS), server.metrics().toString());
        }
    }

    /** Caller turns need a native channel (they send on its socket); NIO always hands off. */
    private static void assumeNative(HomaSocket s) {
        org.junit.jupiter.api.Assumptions.assumeFalse("nio".equals(s.metrics().transport()),
                "caller turns are off on NIO (no socket to send on outside the loop): nothing to count");
    }

    /**
     * Waits until every one of {@code commands} commands (calls or replies) was counted as a loop
     * hand-off or a caller turn and {@code executor} executor hand-offs happened, then checks the
     * totals: no command was both or neither, some were caller turns, and every caller turn's
     * datagram left by the direct route.
     */
    private static void expectTurns(HomaSocket s, long commands, long executor) {
        Loopback.await(Duration.ofSeconds(10), () -> {
            HomaMetrics m = s.metrics();
            return m.shell(HomaMetrics.Shell.LOOP_HANDOFFS) + m.shell(HomaMetrics.Shell.CALLER_TURNS) >= commands
                    && m.shell(HomaMetrics.Shell.EXECUTOR_HANDOFFS) + m.shell(HomaMetrics.Shell.CALLER_COMPLETIONS) >= executor;
        }, () -> s + " " + s.metrics());
        HomaMetrics m = s.metrics();
        long turns = m.shell(HomaMetrics.Shell.CALLER_TURNS);
        assertEquals(commands, m.shell(HomaMetrics.Shell.LOOP_HANDOFFS) + turns, "hand-offs and turns of " + s + ": " + m);
        assertTrue(turns > 0, "no caller turn at all: " + m);
        assertTrue(m.shell(HomaMetrics.Shell.CALLER_DATAGRAMS) >= turns, "each turn sends its datagram itself: " + m);
        // A caller that read its own response (callerReads) completes its future itself: no executor hand-off.
        assertEquals(executor, m.shell(HomaMetrics.Shell.EXECUTOR_HANDOFFS) + m.shell(HomaMetrics.Shell.CALLER_COMPLETIONS),
                "executor hand-offs and caller completions of " + s + ": " + m);
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
            assertEquals(1, m.shell(HomaMetrics.Shell.LOOP_HANDOFFS) + m.shell(HomaMetrics.Shell.CALLER_TURNS),
                    "only the first call, from this thread (a hand-off or a turn of its own): " + m);
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
