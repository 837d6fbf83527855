package io.homa.bench.collective;

import io.homa.bench.JsonParser;
import io.homa.collective.CollectiveOptions;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The emulated training job: every step's exchange completes and is checked (all-reduced sums;
 * a parameter server's pulls as long as the pushes), over Homa and TCP, with all ranks in one
 * process and with one rank per "process" (a thread each here, as the testbed's JVMs would run
 * them), whose figures rank 0 adds up; and bad options say what is wrong.
 */
class JobEmulationTest {
    /**
     * 3 ranks, 3 steps of 10 ms (the first a warm-up), a model of 3 MiB + 100 B in 1 MiB buckets (chunks that do
     * not divide evenly), 2,000 coordination RPCs/s (enough that the two measured steps have some).
     */
    private static JobEmulation.Job job(int ranks, boolean parameterServer) {
        return new JobEmulation.Job(ranks, 3, 1, 10_000_000L, -1, 1.0, 0, (3L << 20) + 100, 1L << 20, 2_000, false, 5, parameterServer);
    }

    @ParameterizedTest
    @CsvSource({"homa-inline, false", "homa-inline, true", "tcp, false", "tcp, true"})
    void aJobInOneProcess_completesEveryStep(String transport, boolean parameterServer) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Map<String, Object> m = JobEmulation.run(transport, job(3, parameterServer),
                new PrintStream(bytes, true, StandardCharsets.UTF_8));
        assertEquals(parameterServer ? "parameter-server" : "allreduce", m.get("exchange"));
        assertEquals(0L, ((Number) m.get("coord_failed")).longValue() - ((Number) m.get("coord_failed_in_warmup")).longValue(),
                "no coordination RPC sent after the warm-up failed: " + m);
        assertTrue(((Number) m.get("step_p50_ms")).doubleValue() >= 10, "a step takes at least its compute: " + m);
        double wait = ((Number) m.get("network_wait_fraction")).doubleValue();
        assertTrue(wait >= 0 && wait < 1, "the wait is a fraction of the step: " + wait);
    }

    @ParameterizedTest
    @CsvSource({"homa, false", "homa, true", "tcp, false", "tcp, true"})
    void rankProcesses_runTheJob_andRankZeroAddsTheirFiguresUp(String transport, boolean parameterServer, @TempDir Path dir)
            throws Exception {
        int n = 3;
        List<InetSocketAddress> members = new ArrayList<>();
        java.util.Set<Integer> taken = new java.util.HashSet<>();
        while (members.size() < n) {
            int port = freePortPair();
            if (taken.add(port) && !taken.contains(port - 1) && !taken.contains(port + 1)) { // ranks' pairs do not overlap
                taken.add(port + 1);
                members.add(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            }
        }
        JobEmulation.Job job = job(n, parameterServer);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        // Every rank serves its sockets before any sends (a silent peer would fail the first barrier), as the start file does.
        java.util.concurrent.CyclicBarrier allUp = new java.util.concurrent.CyclicBarrier(n);
        List<CompletableFuture<Integer>> ranks = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int rank = r;
            ranks.add(JobEmulation.onThread("rank-" + rank, () -> JobRankProcess.run(rank, members, transport, 0, 0,
                    CollectiveOptions.defaults(), job, rank == 0 ? dir.resolve("job.json") : null, x -> {
                        try {
                            allUp.await(60, TimeUnit.SECONDS);
                        } catch (Exception e) {
                            throw new IllegalStateException("rank " + x + ": the others did not come up", e);
                        }
                    }, out)));
        }
        for (CompletableFuture<Integer> r : ranks) {
            assertEquals(0, r.get(120, TimeUnit.SECONDS));
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> json = (Map<String, Object>) JsonParser.parse(Files.readString(dir.resolve("job.json")));
        assertEquals("testbed-job", json.get("mode"));
        @SuppressWarnings("unchecked")
        Map<String, Object> m = ((List<Map<String, Object>>) json.get("results")).get(0);
        assertEquals(n, ((Number) m.get("ranks")).intValue());
        assertEquals(0L, ((Number) m.get("coord_failed")).longValue() - ((Number) m.get("coord_failed_in_warmup")).longValue(),
                "no coordination RPC sent after the warm-up failed: " + m);
        assertTrue(((Number) m.get("step_p50_ms")).doubleValue() >= 10, "every worker's steps were added up: " + m);
        assertTrue(((Number) m.get("job_completion_s")).doubleValue() > 0);
        assertTrue(((Number) m.get("coord_all_count")).longValue() > 0, "the ranks' coordination latencies were summed: " + m);
        assertTrue(bytes.toString(StandardCharsets.UTF_8).contains(parameterServer ? "parameter server" : "all-reduced"),
                bytes.toString(StandardCharsets.UTF_8));
    }

    @Test
    void warmupSteps_areLeftOutOfTheStepFigures_butNotOutOfTheJob() {
        // 2 workers and a parameter server, 4 steps: steps 0-1 slow (100, 90 ms), 2-3 fast (10, 11 ms).
        JobEmulation.Job job = new JobEmulation.Job(3, 4, 2, 0, -1, 1.0, 0, 1L << 20, 1L << 20, 0, false, 5, true);
        long ms = 1_000_000;
        long[][] steps = {{0, 0, 0, 0}, {100 * ms, 90 * ms, 10 * ms, 11 * ms}, {100 * ms, 90 * ms, 10 * ms, 11 * ms}};
        long[][] waits = {{0, 0, 0, 0}, {50 * ms, 45 * ms, 5 * ms, 11 * ms}, {50 * ms, 45 * ms, 5 * ms, 11 * ms}};
        org.HdrHistogram.Histogram none = new org.HdrHistogram.Histogram(3);
        Map<String, Object> m = JobEmulation.summarize("tcp", job, steps, waits, none, none, 3, 2, 211 * ms,
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        assertEquals(2, ((Number) m.get("warmup_steps")).intValue());
        assertEquals(11.0, ((Number) m.get("step_p99_ms")).doubleValue(), 0.01, "the warm-up's 90-100 ms steps are left out: " + m);
        assertEquals(0.75, ((Number) m.get("network_wait_fraction")).doubleValue(), 1e-9, "(5/10 + 11/11) / 2: " + m);
        assertEquals(0.211, ((Number) m.get("job_completion_s")).doubleValue(), 1e-9, "the job's time counts every step");
        assertEquals(3L, ((Number) m.get("coord_failed")).longValue(), "every failed call counts");
        assertEquals(2L, ((Number) m.get("coord_failed_in_warmup")).longValue());
    }

    @Test
    void coordinationCalls_areRecordedOnlyOnceTheWarmupIsOver() throws Exception {
        java.util.concurrent.atomic.AtomicInteger sent = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.CountDownLatch twenty = new java.util.concurrent.CountDownLatch(20);
        io.homa.bench.EchoClient echo = new io.homa.bench.EchoClient() {
            @Override
            public CompletableFuture<byte[]> call(byte[] request) {
                sent.incrementAndGet();
                twenty.countDown();
                return CompletableFuture.completedFuture(request); // answered at once: recorded on the sender's thread
            }

            @Override
            public void close() {
            }
        };
        List<List<io.homa.bench.EchoClient>> clients = List.of(java.util.Arrays.asList(null, echo), java.util.Arrays.asList(echo, null));
        JobEmulation.Coordination coordination = new JobEmulation.Coordination();
        CompletableFuture<Object> sender = JobEmulation.onThread("coordination", () -> {
            JobEmulation.coordinate(50_000, 2, new java.util.SplittableRandom(1), () -> 0, clients,
                    new java.util.concurrent.atomic.AtomicInteger(), coordination);
            return null;
        });
        assertTrue(twenty.await(60, TimeUnit.SECONDS), "the sender made 20 calls");
        assertEquals(0, coordination.all.getTotalCount(), "nothing recorded during the warm-up");
        coordination.startMeasuring();
        int atStart = sent.get();
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (sent.get() < atStart + 20 && System.nanoTime() - giveUp < 0) {
            Thread.onSpinWait(); // until 20 more calls were sent
        }
        coordination.stop();
        sender.get(60, TimeUnit.SECONDS);
        int after = sent.get() - atStart;
        long recorded = coordination.all.getTotalCount();
        assertTrue(after >= 20, "20 calls after the warm-up: " + after);
        assertTrue(recorded >= after - 1 && recorded <= sent.get() - 20,
                "the calls after the warm-up were recorded (" + recorded + " of " + after + "), the first 20 not");
        assertEquals(0, coordination.failed.get());
    }

    @Test
    void badOptions_sayWhatIsWrong() {
        PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CollectiveCommand.execute(new String[]{"--job", "--exchange", "gossip"}, out));
        assertTrue(e.getMessage().contains("--exchange is allreduce or ps"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> CollectiveCommand.execute(new String[]{"--exchange", "ps"}, out));
        assertTrue(e.getMessage().contains("option of --job"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CollectiveCommand.execute(
                new String[]{"--job", "--rank", "2", "--members", "127.0.0.1:1,127.0.0.1:2"}, out));
        assertTrue(e.getMessage().contains("not one of the 2 --members"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CollectiveCommand.execute(
                new String[]{"--job", "--exchange", "ps", "--slow-rank", "0"}, out));
        assertTrue(e.getMessage().contains("the parameter server"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CollectiveCommand.execute(
                new String[]{"--job", "--steps", "5", "--warmup-steps", "5"}, out));
        assertTrue(e.getMessage().contains("--steps (5) must be more than --warmup-steps (5)"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CollectiveCommand.execute(
                new String[]{"--job", "--warmup-steps", "0"}, out));
        assertTrue(e.getMessage().contains("--warmup-steps must be at least 1"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CollectiveCommand.execute(new String[]{"--warmup-steps", "3"}, out));
        assertTrue(e.getMessage().contains("--warmup-steps is an option of --job"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CollectiveCommand.execute(new String[]{"--job", "--ranks", "1"}, out));
        assertTrue(e.getMessage().contains("at least 2 ranks"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CollectiveCommand.execute(
                new String[]{"--job", "--rank", "1", "--members", "127.0.0.1:5000,10.99.0.1:5000"}, out));
        assertTrue(e.getMessage().contains("-Dhoma.bench.host=10.99.0.1"), e.getMessage());
    }

    /** A port whose number and the next are free for both UDP and TCP (a group port and its RPC port). */
    private static int freePortPair() throws IOException {
        for (int attempt = 0; attempt < 200; attempt++) {
            int port;
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                port = s.getLocalPort();
            }
            if (port < 65_535 && free(port) && free(port + 1)) {
                return port;
            }
        }
        throw new IOException("no two free consecutive ports on loopback");
    }

    private static boolean free(int port) {
        try (ServerSocket t = new ServerSocket(port, 1, InetAddress.getLoopbackAddress());
             DatagramSocket u = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), port))) {
            return t.getLocalPort() == port && u.getLocalPort() == port;
        } catch (IOException e) {
            return false;
        }
    }
}
