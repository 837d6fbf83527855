package io.homa.bench.load;

import io.homa.bench.Json;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code load-node}, {@code load-server} and {@code load-client}: the workload load generator,
 * modelled on Linux Homa's cp_node. A node serves at {@code --bind} and, given {@code --servers},
 * sends open-loop Poisson RPCs to a random other server, with request sizes from a workload, at
 * {@code --gbps} of request data; latency is measured from each call's scheduled send time (no
 * coordinated omission). {@code load-server} only serves; {@code load-client} only calls.
 * With {@code --calibrate N} it makes sequential calls of the workload's smallest message to the
 * first other server, untimed for {@code --calibrate-warmup} and then N timed, and reports the
 * median round trip (the base RTT of the slowdowns).
 *
 * <p>Bounded: the client stops sending at start + warmup + duration and waits at most
 * {@code --drain} for its calls; a node that also serves keeps serving {@code --linger} longer (for
 * the other nodes' calls) and exits; a server-only node exits after {@code --lifetime} or SIGTERM.
 */
@Command(name = "load-node", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Workload load generator (server and/or open-loop Poisson client), cp_node style.")
public final class LoadNodeCommand implements java.util.concurrent.Callable<Integer> {
    enum Mode { NODE, SERVER, CLIENT }

    @Option(names = "--protocol", required = true, description = "homa or tcp") String protocol;
    @Option(names = "--bind", paramLabel = "ADDR:PORT", description = "Serve here (and, for Homa, call from here).") String bind;
    @Option(names = "--servers", split = ",", paramLabel = "ADDR:PORT", description = "All servers (this node's own address is skipped).") List<String> servers = new ArrayList<>();
    @Option(names = "--workload", defaultValue = "w4", description = "w1..w5 or fixed:N (default ${DEFAULT-VALUE})") String workload;
    @Option(names = "--truncate", paramLabel = "BYTES", defaultValue = "0", description = "Cap message sizes (0: none).") int truncate;
    @Option(names = "--gbps", defaultValue = "0.1", description = "Offered load of this host on its uplink, Gbit/s, counting headers and the responses it serves (default ${DEFAULT-VALUE}).") double gbps;
    @Option(names = "--payload-only-load", description = "Count only request payload in --gbps (the first version's definition; overloads links with small messages).") boolean payloadOnlyLoad;
    @Option(names = "--duration", defaultValue = "30s", description = "Measured sending time (default ${DEFAULT-VALUE}).") String duration;
    @Option(names = "--warmup", defaultValue = "3s", description = "Sending time before measuring (default ${DEFAULT-VALUE}).") String warmup;
    @Option(names = "--drain", defaultValue = "10s", description = "Longest wait for outstanding calls after sending stops (default ${DEFAULT-VALUE}).") String drain;
    @Option(names = "--linger", defaultValue = "3s", description = "A node keeps serving this long after its drain deadline (default ${DEFAULT-VALUE}).") String linger;
    @Option(names = "--lifetime", defaultValue = "15m", description = "A server-only node exits after this long (default ${DEFAULT-VALUE}).") String lifetime;
    @Option(names = "--start-at", paramLabel = "EPOCH_MS", description = "Wall-clock start of sending, so that all nodes start together (default: now + 1 s).") Long startAt;
    @Option(names = "--start-file", paramLabel = "FILE", description = "Start barrier: when ready (serving, connected), create FILE.ready.ADDR_PORT, then wait for FILE to hold the start (epoch ms). Overrides --start-at.") Path startFile;
    @Option(names = "--one-way", description = "Responses are 100 B (default: as long as the request).") boolean oneWay;
    @Option(names = "--link-gbps", defaultValue = "1", description = "Link rate for the slowdown's ideal time and Homa's pacer (default ${DEFAULT-VALUE}).") double linkGbps;
    @Option(names = "--base-rtt-us", defaultValue = "0", description = "Unloaded RTT of the smallest message, us, the same for every protocol (0: no slowdowns).") double baseRttUs;
    @Option(names = "--own-base-rtt-us", defaultValue = "0", description = "This protocol's own unloaded RTT of the smallest message, us (0: no own-base slowdowns).") double ownBaseRttUs;
    @Option(names = "--homa-max-incoming", paramLabel = "BYTES", defaultValue = "0", description = "Homa's grant budget (HomaConfig.maxIncoming; 0: derived from --link-gbps).") int homaMaxIncoming;
    @Option(names = "--threads", defaultValue = "1", description = "TCP event loop threads (default ${DEFAULT-VALUE}).") int threads;
    @Option(names = "--tcp-connections", defaultValue = "4", description = "TCP connections per client-server pair (default ${DEFAULT-VALUE}).") int tcpConnections;
    @Option(names = "--calibrate", paramLabel = "N", defaultValue = "0", description = "Calibration: N sequential calls of the smallest message, timed after --calibrate-warmup.") int calibrate;
    @Option(names = "--calibrate-warmup", defaultValue = "5s", description = "Calibration: sequential calls, not timed, for this long first (the JIT; default ${DEFAULT-VALUE}).") String calibrateWarmup;
    @Option(names = "--generator-scheduling", defaultValue = "fifo", description = "fifo: the generator's thread in the real-time class (SCHED_FIFO, needs root and chrt; else it stays normal and the results say why), so that its sends leave on time; normal: as any thread (default ${DEFAULT-VALUE}).") String generatorScheduling;
    @Option(names = "--seed", defaultValue = "1", description = "Random seed (mixed with the bind address, not the port).") long seed;
    @Option(names = "--out", paramLabel = "FILE.json", description = "Results file.") Path out;

    private final Mode mode;
    private final String commandLine;

    LoadNodeCommand(Mode mode, String commandLine) {
        this.mode = mode;
        this.commandLine = commandLine;
    }

    /** Runs {@code args} (what follows the command name); returns the exit code. */
    public static int execute(String name, String[] args) {
        Mode mode = switch (name) {
            case "load-server" -> Mode.SERVER;
            case "load-client" -> Mode.CLIENT;
            default -> Mode.NODE;
        };
        CommandLine cl = new CommandLine(new LoadNodeCommand(mode, "java -jar homa-bench.jar " + name + " " + String.join(" ", args)));
        cl.setCommandName(name);
        cl.setOut(new PrintWriter(System.out, true));
        cl.setErr(new PrintWriter(System.err, true));
        return cl.execute(args);
    }

    static Duration duration(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT);
        if (t.endsWith("ms")) {
            return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
        }
        if (!t.isEmpty() && Character.isDigit(t.charAt(t.length() - 1))) {
            return Duration.ofNanos((long) (Double.parseDouble(t) * 1e9)); // no unit: seconds ("0" too)
        }
        double v = Double.parseDouble(t.substring(0, t.length() - 1));
        return switch (t.charAt(t.length() - 1)) {
            case 's' -> Duration.ofNanos((long) (v * 1e9));
            case 'm' -> Duration.ofNanos((long) (v * 60e9));
            case 'h' -> Duration.ofNanos((long) (v * 3600e9));
            default -> Duration.ofNanos((long) (Double.parseDouble(t) * 1e9));
        };
    }

    /** {@code ADDR:PORT} as an address (the last colon splits, so an IPv6 literal works); bench commands share it. */
    public static InetSocketAddress address(String s) {
        int colon = s.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("expected ADDR:PORT, got " + s);
        }
        return new InetSocketAddress(s.substring(0, colon).trim(), Integer.parseInt(s.substring(colon + 1).trim()));
    }

    private void log(String msg) {
        System.err.printf(Locale.ROOT, "[%s %s %s] %s%n", mode.name().toLowerCase(Locale.ROOT), protocol, bind == null ? "-" : bind, msg);
    }

    @Override
    public Integer call() throws Exception {
        if (!protocol.equals("homa") && !protocol.equals("tcp")) {
            System.err.println("--protocol must be homa or tcp");
            return 2;
        }
        InetSocketAddress self = bind == null ? null : address(bind);
        boolean serve = mode != Mode.CLIENT && self != null;
        if (mode == Mode.SERVER && self == null) {
            System.err.println("load-server needs --bind");
            return 2;
        }
        List<InetSocketAddress> peers = new ArrayList<>();
        if (mode != Mode.SERVER) {
            for (String s : servers) {
                InetSocketAddress a = address(s);
                if (self == null || !a.equals(self)) {
                    peers.add(a);
                }
            }
        }
        boolean client = !peers.isEmpty();
        if (!serve && !client) {
            System.err.println("nothing to do: give --bind to serve and/or --servers to call");
            return 2;
        }
        SizeDistribution sizes = SizeDistribution.parse(workload, truncate);
        Duration dur = duration(duration);
        Duration warm = duration(warmup);
        Duration drn = duration(drain);
        Duration deadline = warm.plus(dur).plus(drn).plus(Duration.ofSeconds(5));
        long startWall = startAt != null ? startAt : System.currentTimeMillis() + 1000;
        long t0 = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(startWall - System.currentTimeMillis());

        LoadTransport transport = protocol.equals("homa")
                ? new HomaLoadTransport(self != null ? self : new InetSocketAddress("0.0.0.0", 0), serve, linkGbps, homaMaxIncoming, deadline)
                : new TcpLoadTransport(serve ? self : null, serve, threads, tcpConnections);
        Thread hook = new Thread(transport::close, "load-node-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            if (serve) {
                log("serving at " + self);
            }
            if (calibrate > 0) {
                return calibrate(transport, peers, sizes);
            }
            if (!client) {
                long until = System.nanoTime() + duration(lifetime).toNanos();
                while (System.nanoTime() < until) {
                    LockSupport.parkNanos(Math.min(until - System.nanoTime(), 1_000_000_000L));
                }
                log("lifetime over");
                return 0;
            }
            if (transport instanceof TcpLoadTransport tcp) {
                for (InetSocketAddress p : peers) {
                    connectWithRetry(tcp, p, startFile != null ? System.nanoTime() + BARRIER_NANOS : t0);
                }
            }
            if (startFile != null) {
                t0 = awaitStart(startFile);
            }
            int code = runClient(transport, peers, sizes, t0, warm, dur, drn);
            if (serve) {
                long until = t0 + warm.plus(dur).plus(drn).plus(duration(linger)).toNanos();
                while (System.nanoTime() < until) {
                    LockSupport.parkNanos(until - System.nanoTime());
                }
            }
            return code;
        } finally {
            transport.close();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException ignored) {
                // shutting down already
            }
        }
    }

    /** The longest wait at the start barrier (the other nodes' JVMs starting on a busy machine). */
    private static final long BARRIER_NANOS = TimeUnit.SECONDS.toNanos(120);

    /**
     * The start barrier: says this node is ready, then waits for the start time to appear in
     * {@code file} (written atomically by whoever runs the nodes once all are ready); returns it
     * as a {@link System#nanoTime()} value. Slow JVM starts then delay the start, instead of
     * beginning with a backlog of late sends.
     */
    private long awaitStart(Path file) throws IOException {
        String me = bind == null ? "client-" + ProcessHandle.current().pid() : bind.replace(':', '_');
        Path ready = file.toAbsolutePath().resolveSibling(file.getFileName() + ".ready." + me);
        Files.createDirectories(ready.getParent());
        Files.writeString(ready, "", StandardCharsets.UTF_8);
        long until = System.nanoTime() + BARRIER_NANOS;
        while (!Files.exists(file)) {
            if (System.nanoTime() > until) {
                throw new IOException("no start time in " + file + " after " + TimeUnit.NANOSECONDS.toSeconds(BARRIER_NANOS) + " s");
            }
            LockSupport.parkNanos(20_000_000L);
        }
        long startWall = Long.parseLong(Files.readString(file, StandardCharsets.UTF_8).trim());
        return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(startWall - System.currentTimeMillis());
    }

    private void connectWithRetry(TcpLoadTransport tcp, InetSocketAddress peer, long t0) {
        long until = Math.max(t0, System.nanoTime() + 2_000_000_000L) + 3_000_000_000L;
        while (true) {
            try {
                tcp.connect(peer);
                return;
            } catch (Exception e) { // Netty rethrows ConnectException unchecked
                if (System.nanoTime() > until) {
                    throw new IllegalStateException("cannot connect to " + peer + ": " + e, e);
                }
                LockSupport.parkNanos(200_000_000L);
            }
        }
    }

    /** Calls until one call succeeds (the server's JVM may still be starting), for at most 30 s. */
    private static void awaitServer(LoadTransport transport, InetSocketAddress peer, int len, int resp) {
        long until = System.nanoTime() + 30_000_000_000L;
        while (true) {
            try {
                transport.call(peer, len, resp).get(2, TimeUnit.SECONDS);
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + peer, e);
            } catch (Exception e) {
                if (System.nanoTime() > until) {
                    throw new IllegalStateException("no answer from " + peer + " in 30 s: " + e, e);
                }
            }
        }
    }

    private int calibrate(LoadTransport transport, List<InetSocketAddress> peers, SizeDistribution sizes) throws IOException {
        if (peers.isEmpty()) {
            System.err.println("--calibrate needs --servers with another node");
            return 2;
        }
        InetSocketAddress peer = peers.get(0);
        if (transport instanceof TcpLoadTransport tcp) {
            connectWithRetry(tcp, peer, System.nanoTime());
        }
        int len = sizes.smallest();
        int resp = oneWay ? 100 : len;
        awaitServer(transport, peer, len, resp);
        // Warm up for a fixed time first: the JIT compiles a protocol's path only after some
        // thousands of calls, and a user-space transport has more of it to compile than one whose
        // path is mostly in the kernel (3,000 calls, the first fifth skipped, left Homa's code
        // half cold: 207 against 103 us on loopback after 30,000 calls; TCP's 56 against 33).
        // A failed warm-up call (a lost datagram, a slow start) is counted apart: it does not make
        // the calibration fail, as a failed timed call does.
        long warmEnd = System.nanoTime() + duration(calibrateWarmup).toNanos();
        int warmupCalls = 0;
        int warmupFailures = 0;
        while (System.nanoTime() < warmEnd) {
            warmupCalls++;
            try {
                transport.call(peer, len, resp).get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                warmupFailures++;
            }
        }
        int failures = 0;
        long[] rtts = new long[calibrate];
        for (int i = 0; i < calibrate; i++) {
            long t = System.nanoTime();
            try {
                transport.call(peer, len, resp).get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                failures++;
            }
            rtts[i] = System.nanoTime() - t;
        }
        long[] kept = rtts; // all timed calls: the warm-up above is not among them
        Arrays.sort(kept);
        double median = kept[kept.length / 2] / 1000.0;
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("protocol", protocol);
        m.put("server", peer.toString());
        m.put("length", len);
        m.put("responseLength", resp);
        m.put("calls", calibrate);
        m.put("warmupCalls", warmupCalls);
        m.put("warmupFailures", warmupFailures);
        m.put("failures", failures);
        m.put("medianRttUs", median);
        m.put("p10RttUs", kept[kept.length / 10] / 1000.0);
        m.put("p90RttUs", kept[kept.length * 9 / 10] / 1000.0);
        if (out != null) {
            write(out, m);
        }
        System.out.printf(Locale.ROOT, "%.1f%n", median);
        log(String.format(Locale.ROOT, "calibration: %d calls of %d B, median RTT %.1f us, %d failures", calibrate, len, median, failures));
        return failures == 0 ? 0 : 1;
    }

    private int runClient(LoadTransport transport, List<InetSocketAddress> peers, SizeDistribution sizes,
                          long t0, Duration warm, Duration dur, Duration drn) throws IOException {
        // Calls per second. Every host calls and serves alike, so its uplink carries its requests and
        // the responses to as many incoming calls, each with its headers.
        double bytesPerCall = payloadOnlyLoad ? sizes.mean() : sizes.meanWireBytesPerRpc(oneWay ? 100 : -1);
        double rate = gbps * 1e9 / (8 * bytesPerCall);
        // The generator is the measuring instrument: when it waits for a CPU, every later call
        // is late. Its thread runs in the real-time class (as root; see GeneratorScheduling and
        // docs/benchmarks.md, "Why the generator was late"), else, under
        // -XX:ThreadPriorityPolicy=1, at nice -5 against the event loops' 0.
        Thread.currentThread().setPriority(Thread.MAX_PRIORITY);
        if (!generatorScheduling.equals("fifo") && !generatorScheduling.equals("normal")) {
            throw new CommandLine.ParameterException(new CommandLine(this),
                    "--generator-scheduling is fifo or normal, got " + generatorScheduling);
        }
        LoadRecorder rec = new LoadRecorder(sizes, baseRttUs, ownBaseRttUs, linkGbps);
        SendLateness lateness = new SendLateness();
        // Seeded by the host's address, not its port: Homa and TCP runs (on different ports) then
        // offer exactly the same calls (times, sizes, servers), which matters with heavy tails.
        SplittableRandom random = new SplittableRandom(seed * 0x9E3779B97F4A7C15L
                ^ (bind == null ? 0 : bind.substring(0, Math.max(0, bind.lastIndexOf(':'))).hashCode()));
        long measureStart = t0 + warm.toNanos();
        long end = measureStart + dur.toNanos();
        MeasuredCounters measuredCounters = new MeasuredCounters(transport::metrics, measureStart, end);
        AtomicLong inflight = new AtomicLong();
        log(String.format(Locale.ROOT, "client: %s mean %.0f B, %.3f Gbit/s = %.1f calls/s to %d servers, start in %d ms",
                sizes, sizes.mean(), gbps, rate, peers.size(), TimeUnit.NANOSECONDS.toMillis(t0 - System.nanoTime())));
        MachineCpuShares cpuShares = new MachineCpuShares();
        boolean sharesStarted = false;
        long offered = 0;
        long offeredBytes = 0;
        long previousStart = 0;
        long previousReturn = 0;
        long previousCallPause = 0;
        String scheduling = GeneratorScheduling.apply(generatorScheduling.equals("fifo"));
        log("generator thread: " + scheduling);
        // A JVM that starts late (a busy machine) begins with a backlog of sends, all late.
        long startLagNanos = Math.max(0, System.nanoTime() - t0);
        long next = t0;
        try (ThreadSchedStat sched = ThreadSchedStat.ofCurrentThread()) {
            while (true) {
                next += (long) (-Math.log(1 - random.nextDouble()) / rate * 1e9);
                if (next >= end) {
                    break;
                }
                // The scheduler's and the GC's account around the wait, to say why a send left late.
                long waitStart = System.nanoTime();
                long runQueueBefore = sched.runQueueNanos();
                long gcBeforeWait = SendLateness.gcMillis();
                long wait;
                while ((wait = next - System.nanoTime()) > 0) {
                    LockSupport.parkNanos(wait);
                }
                int len = sizes.sample(random);
                InetSocketAddress peer = peers.get(random.nextInt(peers.size()));
                boolean measured = next >= measureStart;
                if (measured && !sharesStarted) {
                    cpuShares.start();
                    sharesStarted = true;
                }
                long scheduled = next;
                long callStart = System.nanoTime();
                if (measured) {
                    offered++;
                    offeredBytes += len;
                    lateness.generator(scheduled, callStart, previousStart, previousReturn, previousCallPause);
                    lateness.cause(scheduled, callStart, waitStart < scheduled,
                            runQueueBefore < 0 ? -1 : sched.runQueueNanos() - runQueueBefore,
                            TimeUnit.MILLISECONDS.toNanos(SendLateness.gcMillis() - gcBeforeWait));
                    inflight.incrementAndGet();
                }
                LoadTransport.SendObserver observer = measured
                        ? (ioStart, started) -> lateness.transport(callStart, ioStart, started) : LoadTransport.SendObserver.NONE;
                long gcBefore = SendLateness.gcMillis();
                CompletableFuture<Integer> f;
                try {
                    f = transport.call(peer, len, oneWay ? 100 : len, observer);
                } catch (RuntimeException e) {
                    f = CompletableFuture.failedFuture(e);
                }
                previousStart = callStart;
                previousReturn = System.nanoTime();
                previousCallPause = TimeUnit.MILLISECONDS.toNanos(SendLateness.gcMillis() - gcBefore);
                f.whenComplete((v, t) -> {
                    if (!measured) {
                        return;
                    }
                    long now = System.nanoTime();
                    if (t == null) {
                        rec.success(len, now - scheduled);
                    } else {
                        rec.failure(t);
                    }
                    inflight.decrementAndGet();
                });
            }
        }
        cpuShares.stop();
        long drainUntil = end + drn.toNanos();
        while (inflight.get() > 0 && System.nanoTime() < drainUntil) {
            LockSupport.parkNanos(1_000_000L);
        }
        long unfinished = inflight.get();
        double seconds = dur.toNanos() / 1e9;
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("command", commandLine);
        settings.put("workload", sizes.name());
        settings.put("truncate", truncate);
        settings.put("meanLength", sizes.mean());
        settings.put("gbps", gbps);
        settings.put("callsPerSecond", rate);
        settings.put("loadCountsWireBytes", !payloadOnlyLoad);
        settings.put("durationS", seconds);
        settings.put("warmupS", warm.toNanos() / 1e9);
        settings.put("drainS", drn.toNanos() / 1e9);
        settings.put("oneWay", oneWay);
        settings.put("linkGbps", linkGbps);
        settings.put("baseRttUs", baseRttUs);
        settings.put("ownBaseRttUs", ownBaseRttUs);
        settings.put("servers", peers.stream().map(InetSocketAddress::toString).toList());
        if (protocol.equals("tcp")) {
            settings.put("tcpConnectionsPerServer", tcpConnections);
        }
        settings.put("seed", seed);
        settings.put("generatorScheduling", scheduling);

        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("offeredCalls", offered);
        summary.put("offeredCallsPerS", offered / seconds);
        summary.put("offeredGbps", offeredBytes * 8 / seconds / 1e9);
        // Exact counts too: the JSON keeps 3 decimals, too few for Gbit/s on slow links.
        summary.put("offeredBytes", offeredBytes);
        summary.put("completedBytes", rec.completedBytes());
        summary.put("completedCalls", rec.completed());
        summary.put("completedCallsPerS", rec.completed() / seconds);
        summary.put("completedGbps", rec.completedBytes() * 8 / seconds / 1e9);
        summary.put("failures", rec.failures() + unfinished);
        summary.put("failed", rec.failures());
        summary.put("unfinished", unfinished);
        summary.put("failureKinds", rec.failureKinds());
        summary.put("clientStartLagMs", startLagNanos / 1e6);
        summary.putAll(lateness.json());
        summary.putAll(cpuShares.json());
        summary.put("validCpu", SendLateness.valid(lateness.cpuLateFraction()));
        List<Object> buckets = rec.bucketsJson();
        @SuppressWarnings("unchecked")
        Map<String, Object> shortBucket = (Map<String, Object>) buckets.get(0);
        summary.put("shortP50Slowdown", shortBucket.get("p50Slowdown"));
        summary.put("shortP99Slowdown", shortBucket.get("p99Slowdown"));
        summary.put("shortP50OwnSlowdown", shortBucket.get("p50OwnSlowdown"));
        summary.put("shortP99OwnSlowdown", shortBucket.get("p99OwnSlowdown"));
        summary.put("shortP50RttUs", shortBucket.get("p50RttUs"));
        summary.put("shortP99RttUs", shortBucket.get("p99RttUs"));

        Map<String, Object> m = new LinkedHashMap<>();
        m.put("protocol", protocol);
        m.put("node", bind);
        m.put("settings", settings);
        m.put("summary", summary);
        m.put("transportMetrics", transport.metrics());
        measuredCounters.putInto(m, 5_000);
        m.put("buckets", buckets);
        if (out != null) {
            write(out, m);
        }
        log(String.format(Locale.ROOT, "done: offered %d, completed %d, failed %d, unfinished %d, short p50/p99 slowdown %s/%s, CPU-late sends %.2f%%",
                offered, rec.completed(), rec.failures(), unfinished, shortBucket.get("p50Slowdown"), shortBucket.get("p99Slowdown"),
                100 * lateness.cpuLateFraction()));
        return 0;
    }

    static void write(Path file, Object json) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, Json.write(json), StandardCharsets.UTF_8);
        Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }
}
