package io.homa.bench.overload;

import io.homa.HomaConfig;
import io.homa.HomaException;
import io.homa.HomaOverloadedException;
import io.homa.HomaSocket;
import io.homa.HomaTimeoutException;
import io.homa.bench.Json;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The flood of issue 25, as a new user meets it: a server JVM of its own (default configuration
 * but its executor threads, a small heap) whose handler takes a fixed time, and client sockets in
 * this JVM that send it many requests at once, each with a deadline. Reports, per setting and run:
 * the calls that succeeded against the handlers' capacity (threads x deadline / handler time), how
 * the others failed and how soon, handlers started for callers who had already given up, how long
 * a new call takes right after the flood, and the server's live heap.
 *
 * <p>A <em>cold</em> flood meets code that has only served a few seconds of calls, four at a time:
 * the paths of overload (refusals, client windows, the queue's policy) are compiled during the
 * flood, and on two cores the JIT compilers of both JVMs then take a large part of the CPU (70% in
 * a flood's last second, measured with perf). A <em>warm</em> flood comes after one flood like it
 * against the same server JVM and a wait until neither JVM has compiled anything for a second:
 * a server that has met overload before. {@code --jit cold,warm} runs both for each setting.
 *
 * <pre>
 * java -cp homa-bench.jar io.homa.bench.Main overload [--handler-ms 1,10,100] [--threads 1,2,16]
 *     [--jit cold,warm] [--calls 20000] [--clients 8] [--max-calls-per-server 200] [--deadline 5s] [--runs 3]
 *     [--heap 256m] [--out DIR]
 * </pre>
 */
public final class OverloadCommand {
    private OverloadCommand() {
    }

    /** The figures of one run. */
    public record Run(double handlerMs, int threads, boolean warm, int calls, long deadlineMs, long capacity,
                      long succeeded, long overloaded, long timedOut, long otherFailures, double overloadedP50Ms,
                      double floodMs, long handlersDuringFlood, long lateStarts, double worstLateMs, double newCallMs,
                      boolean newCallOk, double liveHeapMiB, boolean serverAlive, long jitMsDuringFlood,
                      Map<String, String> server) {
        Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("handler_ms", handlerMs);
            m.put("warm", warm);
            m.put("jit_ms_during_flood", jitMsDuringFlood);
            m.put("threads", threads);
            m.put("calls", calls);
            m.put("deadline_ms", deadlineMs);
            m.put("capacity", capacity);
            m.put("succeeded", succeeded);
            m.put("overloaded", overloaded);
            m.put("timed_out", timedOut);
            m.put("other_failures", otherFailures);
            m.put("overloaded_p50_ms", overloadedP50Ms);
            m.put("flood_ms", floodMs);
            m.put("handlers_during_flood", handlersDuringFlood);
            m.put("late_handler_starts", lateStarts);
            m.put("worst_late_ms", worstLateMs);
            m.put("new_call_ms", newCallMs);
            m.put("new_call_ok", newCallOk);
            m.put("server_live_heap_mib", liveHeapMiB);
            m.put("server_alive", serverAlive);
            m.put("server", new LinkedHashMap<>(server));
            return m;
        }
    }

    public static int execute(String[] args, PrintStream out) {
        List<Double> handlerMs = List.of(10.0);
        List<Integer> threads = List.of(2);
        List<Boolean> warmth = List.of(false, true);
        int calls = 20_000;
        int clients = 8;
        int window = HomaConfig.DEFAULT_MAX_CALLS_PER_SERVER;
        Duration deadline = Duration.ofSeconds(5);
        int runs = 3;
        String heap = "256m";
        Path dir = null;
        for (int i = 0; i < args.length; i++) {
            String v = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i]) {
                case "--handler-ms" -> { handlerMs = Arrays.stream(v.split(",")).map(Double::parseDouble).toList(); i++; }
                case "--threads" -> { threads = Arrays.stream(v.split(",")).map(Integer::parseInt).toList(); i++; }
                case "--jit" -> { warmth = Arrays.stream(v.split(",")).map(OverloadCommand::warmth).toList(); i++; }
                case "--calls" -> { calls = Integer.parseInt(v); i++; }
                case "--clients" -> { clients = Integer.parseInt(v); i++; }
                case "--max-calls-per-server" -> { window = Integer.parseInt(v); i++; }
                case "--deadline" -> { deadline = Duration.parse("PT" + v.toUpperCase(Locale.ROOT)); i++; }
                case "--runs" -> { runs = Integer.parseInt(v); i++; }
                case "--heap" -> { heap = v; i++; }
                case "--out" -> { dir = Path.of(v); i++; }
                case "--help" -> {
                    out.println("overload [--handler-ms 1,10,100] [--threads 1,2,16] [--jit cold,warm] [--calls 20000]"
                            + " [--clients 8] [--max-calls-per-server " + HomaConfig.DEFAULT_MAX_CALLS_PER_SERVER + "]"
                            + " [--deadline 5s] [--runs 3] [--heap 256m] [--out DIR]");
                    return 0;
                }
                default -> throw new IllegalArgumentException("unknown option " + args[i] + " (--help)");
            }
        }
        List<Run> all = new ArrayList<>();
        out.printf(Locale.ROOT, "%-8s %-7s %-4s %-4s %9s %9s %10s %9s %8s %9s %7s %11s %10s %7s%n", "handler", "threads",
                "jit", "run", "succeeded", "capacity", "overloaded", "timedout", "ovl p50", "handlers", "late", "new call",
                "live heap", "jit ms");
        for (double h : handlerMs) {
            for (int t : threads) {
                for (boolean warm : warmth) {
                    for (int run = 1; run <= runs; run++) {
                        Run r = runOnce(h, t, warm, calls, clients, window, deadline, heap);
                        all.add(r);
                        out.printf(Locale.ROOT, "%-8s %-7d %-4s %-4d %9d %9d %10d %9d %6.0fms %9d %7d %9s %8.1fMiB %7d%s%n",
                                h + "ms", t, warm ? "warm" : "cold", run, r.succeeded, r.capacity, r.overloaded,
                                r.timedOut, r.overloadedP50Ms, r.handlersDuringFlood, r.lateStarts,
                                r.newCallOk ? String.format(Locale.ROOT, "%.1fms", r.newCallMs) : "FAILED",
                                r.liveHeapMiB, r.jitMsDuringFlood, r.serverAlive ? "" : "  SERVER DIED");
                    }
                }
            }
        }
        if (dir != null) {
            try {
                Files.createDirectories(dir);
                Map<String, Object> doc = new LinkedHashMap<>();
                doc.put("command", "overload");
                doc.put("calls", calls);
                doc.put("clients", clients);
                doc.put("max_calls_per_server", window);
                doc.put("deadline_ms", deadline.toMillis());
                doc.put("server_heap", heap);
                doc.put("runs", all.stream().map(Run::toJson).toList());
                Files.writeString(dir.resolve("results.json"), Json.write(doc));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return 0;
    }

    private static boolean warmth(String v) {
        return switch (v) {
            case "cold" -> false;
            case "warm" -> true;
            default -> throw new IllegalArgumentException("--jit takes cold and/or warm, was " + v);
        };
    }

    /** One cold flood against a fresh server JVM. */
    public static Run runOnce(double handlerMs, int threads, int calls, int clientCount, Duration deadline, String heap) {
        return runOnce(handlerMs, threads, false, calls, clientCount, HomaConfig.DEFAULT_MAX_CALLS_PER_SERVER, deadline,
                heap);
    }

    /**
     * One flood against a fresh server JVM; if {@code warm}, after a flood like it and a quiet JIT.
     * The client sockets have the default configuration but {@code maxCallsPerServer}.
     */
    public static Run runOnce(double handlerMs, int threads, boolean warm, int calls, int clientCount,
                              int maxCallsPerServer, Duration deadline, String heap) {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.add("-Xmx" + heap);
        cmd.add("-XX:+ExitOnOutOfMemoryError");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(io.homa.bench.Main.class.getName());
        cmd.addAll(List.of("overload-server", "--handler-ms", Double.toString(handlerMs), "--threads",
                Integer.toString(threads)));
        Process p;
        try {
            p = new ProcessBuilder(cmd).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the server JVM: " + cmd, e);
        }
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null; ) {
                    lines.add(l);
                }
            } catch (IOException e) {
                // gone
            }
        }, "overload-server-out");
        reader.setDaemon(true);
        reader.start();
        // Its standard error goes to ours through Java (a forked test JVM's native stream is its runner's channel).
        Thread errors = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null; ) {
                    System.err.println("[overload-server] " + l);
                }
            } catch (IOException e) {
                // gone
            }
        }, "overload-server-err");
        errors.setDaemon(true);
        errors.start();
        BufferedWriter commands = new BufferedWriter(new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8));
        List<HomaSocket> clients = new ArrayList<>();
        try {
            String first = lines.poll(60, TimeUnit.SECONDS);
            if (first == null || !first.startsWith("PORT ")) {
                throw new IllegalStateException("the server JVM did not start: " + first);
            }
            InetSocketAddress server = new InetSocketAddress("127.0.0.1", Integer.parseInt(first.substring(5).trim()));
            for (int i = 0; i < clientCount; i++) {
                clients.add(HomaSocket.open(HomaConfig.builder().bindAddress(new InetSocketAddress("127.0.0.1", 0))
                        .maxCallsPerServer(maxCallsPerServer).build()));
            }
            warmUp(clients.get(0), server);
            boolean jitQuiet = false;
            if (warm) {
                new Flood(calls, deadline).run(clients, server); // its figures are not kept
                jitQuiet = waitForQuietJit(commands, lines);
            }
            Map<String, String> serverBefore = stats(commands, lines);
            long before = Long.parseLong(serverBefore.get("started"));
            commands.write("RESET\n"); // the late starts and the idle time between handlers count from the flood on
            commands.flush();
            lines.poll(10, TimeUnit.SECONDS);
            long jitBefore = jitMs(commands, lines);
            Map<String, Long> clientsBefore = clientCounters(clients);

            Flood flood = new Flood(calls, deadline);
            long start = System.nanoTime();
            flood.run(clients, server);
            double floodMs = (System.nanoTime() - start) / 1e6;
            long during = Long.parseLong(stats(commands, lines).get("started")) - before;
            long jitDuring = jitMs(commands, lines) - jitBefore;

            // A new caller, right after the flood.
            long t0 = System.nanoTime();
            boolean ok;
            String newCallFailure = null;
            try {
                byte[] probe = new byte[100];
                ByteBuffer.wrap(probe).putLong(t0 + deadline.toNanos());
                clients.get(0).call(server, probe, deadline).get(deadline.toMillis() + 5_000, TimeUnit.MILLISECONDS);
                ok = true;
            } catch (Exception e) {
                ok = false;
                newCallFailure = String.valueOf(e instanceof java.util.concurrent.ExecutionException && e.getCause() != null
                        ? e.getCause() : e); // why, in the run's figures
            }
            double newCallMs = (System.nanoTime() - t0) / 1e6;
            Map<String, String> s = stats(commands, lines);
            for (String k : SERVER_COUNTERS) { // per flood (a warm flood's server has met one before)
                s.put(k, Long.toString(Long.parseLong(s.get(k)) - Long.parseLong(serverBefore.get(k))));
            }
            Map<String, Long> clientsAfter = clientCounters(clients);
            clientsAfter.forEach((k, v) -> s.put(k, Long.toString(v - clientsBefore.get(k))));
            s.put("flood_ms", Long.toString((long) floodMs));
            if (newCallFailure != null) {
                s.put("new_call_failure", newCallFailure);
            }
            if (warm) {
                s.put("jit_quiet_before_flood", Boolean.toString(jitQuiet));
            }
            long capacity = (long) (threads * deadline.toNanos() / (handlerMs * 1e6));
            return new Run(handlerMs, threads, warm, calls, deadline.toMillis(), capacity, flood.succeeded.get(),
                    flood.overloaded.get(), flood.timedOut.get(), flood.other.get(), flood.overloadedP50Ms(), floodMs,
                    during, Long.parseLong(s.get("late")), Double.parseDouble(s.get("worstLateMs")), newCallMs, ok,
                    Double.parseDouble(s.get("liveHeapMiB")), p.isAlive(), jitDuring, s);
        } catch (Exception e) {
            if (!p.isAlive()) {
                return new Run(handlerMs, threads, warm, calls, deadline.toMillis(), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                        false, 0, false, 0, Map.of("error", e.toString(), "exit", Integer.toString(p.exitValue())));
            }
            throw new IllegalStateException("overload run failed", e);
        } finally {
            clients.forEach(HomaSocket::close);
            try {
                commands.write("QUIT\n");
                commands.flush();
            } catch (IOException e) {
                // gone already
            }
            try {
                if (!p.waitFor(10, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                p.destroyForcibly();
            }
        }
    }

    /** {@code calls} requests of 8 to 2,000 bytes at once, spread over the clients, each with {@code deadline}. */
    private static final class Flood {
        final int calls;
        final Duration deadline;
        final AtomicLong succeeded = new AtomicLong();
        final AtomicLong overloaded = new AtomicLong();
        final AtomicLong timedOut = new AtomicLong();
        final AtomicLong other = new AtomicLong();
        /** How long after its call each refusal came (ns). */
        final long[] overloadedAfter;
        final AtomicLong overloadedCount = new AtomicLong();

        Flood(int calls, Duration deadline) {
            this.calls = calls;
            this.deadline = deadline;
            this.overloadedAfter = new long[calls];
        }

        /** Makes every call and returns once each has ended. */
        void run(List<HomaSocket> clients, InetSocketAddress server) throws Exception {
            SplittableRandom random = new SplittableRandom(25);
            List<CompletableFuture<?>> futures = new ArrayList<>(calls);
            for (int i = 0; i < calls; i++) {
                byte[] request = new byte[8 + random.nextInt(1_993)]; // 8 to 2,000 bytes
                long callStart = System.nanoTime();
                ByteBuffer.wrap(request).putLong(callStart + deadline.toNanos());
                futures.add(clients.get(i % clients.size()).call(server, request, deadline).handle((v, e) -> {
                    Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                    if (cause == null) {
                        succeeded.incrementAndGet();
                    } else if (cause instanceof HomaOverloadedException) {
                        overloaded.incrementAndGet();
                        int k = (int) overloadedCount.getAndIncrement();
                        overloadedAfter[k] = System.nanoTime() - callStart;
                    } else if (cause instanceof HomaTimeoutException) {
                        timedOut.incrementAndGet();
                    } else {
                        other.incrementAndGet();
                        if (!(cause instanceof HomaException)) {
                            cause.printStackTrace();
                        }
                    }
                    return null;
                }));
            }
            CompletableFuture.allOf(futures.toArray(new CompletableFuture[0]))
                    .get(deadline.toMillis() * 3 + 30_000, TimeUnit.MILLISECONDS);
        }

        double overloadedP50Ms() {
            int n = (int) overloadedCount.get();
            long[] ovl = Arrays.copyOf(overloadedAfter, n);
            Arrays.sort(ovl);
            return n == 0 ? 0 : ovl[n / 2] / 1e6;
        }
    }

    /**
     * The server's figures that count events, reported per flood (the new call after it included).
     * The others are since the server started: the handlers' mean time, the queue-delay
     * percentiles, the live heap's high-water mark.
     */
    private static final List<String> SERVER_COUNTERS = List.of("started", "shed", "expired", "cancelled",
            "overloaded", "skipped", "replied", "compileMs");

    /** The clients' counters that tell how a flood went for them, summed over the sockets. */
    private static Map<String, Long> clientCounters(List<HomaSocket> clients) {
        Map<String, Long> m = new LinkedHashMap<>();
        for (HomaSocket c : clients) {
            io.homa.HomaMetrics x = c.metrics();
            m.merge("client_engine_timeouts", x.counter("TIMEOUTS"), Long::sum);
            m.merge("client_restarts", x.counter("REQUEST_RESTARTS"), Long::sum);
            m.merge("client_received_overloaded", x.packetsReceived("OVERLOADED"), Long::sum);
            m.merge("client_received_rpc_unknown", x.packetsReceived("RPC_UNKNOWN"), Long::sum);
            m.merge("client_sent_resend", x.packetsSent("RESEND"), Long::sum);
            m.merge("client_dropped", x.droppedPackets(), Long::sum);
            m.merge("client_calls_queued", x.shell(io.homa.HomaMetrics.Shell.CALLS_QUEUED), Long::sum);
            m.merge("client_deadline_expired", x.shell(io.homa.HomaMetrics.Shell.CALLS_DEADLINE_EXPIRED), Long::sum);
        }
        return m;
    }

    /** Both JVMs' time spent compiling so far (ms). */
    private static long jitMs(BufferedWriter commands, BlockingQueue<String> lines) throws Exception {
        return Long.parseLong(stats(commands, lines).get("compileMs")) + OverloadServer.compileMillis();
    }

    /** Waits until neither JVM has compiled for a second (at most 30 s); false if they never stopped. */
    private static boolean waitForQuietJit(BufferedWriter commands, BlockingQueue<String> lines) throws Exception {
        long giveUp = System.nanoTime() + 30_000_000_000L;
        long last = jitMs(commands, lines);
        while (System.nanoTime() - giveUp < 0) {
            Thread.sleep(1_000); // the JIT's own pace: what is measured here is whether it still works
            long now = jitMs(commands, lines);
            if (now == last) {
                return true;
            }
            last = now;
        }
        return false;
    }

    /** A few seconds of calls, four at a time, so that the flood does not meet a cold JIT. */
    private static void warmUp(HomaSocket client, InetSocketAddress server) throws Exception {
        long until = System.nanoTime() + 2_000_000_000L;
        int inFlight = 4;
        byte[][] requests = new byte[inFlight][100]; // each reused once its call has ended
        List<CompletableFuture<byte[]>> window = new ArrayList<>();
        while (System.nanoTime() - until < 0) {
            window.clear();
            for (byte[] b : requests) {
                ByteBuffer.wrap(b).putLong(0, System.nanoTime() + 5_000_000_000L);
                window.add(client.call(server, b, Duration.ofSeconds(5)));
            }
            for (CompletableFuture<byte[]> f : window) {
                f.get(10, TimeUnit.SECONDS);
            }
        }
    }

    private static Map<String, String> stats(BufferedWriter commands, BlockingQueue<String> lines) throws Exception {
        commands.write("STATS\n");
        commands.flush();
        String line = lines.poll(30, TimeUnit.SECONDS);
        if (line == null || !line.startsWith("STATS ")) {
            throw new IllegalStateException("the server JVM did not answer STATS: " + line);
        }
        Map<String, String> m = new LinkedHashMap<>();
        for (String kv : line.substring(6).split(" ")) {
            int eq = kv.indexOf('=');
            m.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        return m;
    }
}
