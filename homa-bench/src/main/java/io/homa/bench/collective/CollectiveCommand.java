package io.homa.bench.collective;

import io.homa.bench.Json;

import io.homa.collective.CollectiveOptions;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Collectives over Homa and over TCP, in nccl-tests' and Gloo's conventions: sizes swept, time per
 * operation (p50, p99, min, max over the iterations), algbw = S / t and busbw = algbw x the
 * operation's factor (2(n-1)/n for all-reduce), every result checked against its direct
 * computation. On loopback, several ranks in this JVM (each rank a socket of its own, the default
 * configuration); with {@code --sim}, in the simulated 144-host datacenter with the real engine and
 * synthetic payloads, against the bound 2(n-1)/n x S / link rate.
 *
 * <pre>
 * java -jar homa-bench.jar collective [--op allreduce|broadcast|allgather|reducescatter] [--ranks 4]
 *     [--transports homa,homa-inline,tcp] [--sizes 8,1K,1M | --min 8 --max 32M] [--out DIR]
 * java -jar homa-bench.jar collective --sim [--sim-ranks 16,64] [--sizes 100M] [--out DIR]
 * java -jar homa-bench.jar collective --job [--model resnet50|bert-large] [--steps 10] [--warmup-steps 1] [--compute-ms 100] ...
 * </pre>
 */
public final class CollectiveCommand {
    private CollectiveCommand() {
    }

    public static int execute(String[] args, PrintStream out) {
        String op = "allreduce";
        int ranks = 4;
        List<String> transports = List.of("homa", "homa-inline", "tcp");
        List<Long> sizes = null;
        long min = 8;
        long max = 32L << 20;
        boolean sim = false;
        List<Integer> simRanks = List.of(16, 64);
        Path dir = null;
        boolean job = false;
        boolean parameterServer = false;
        long model = RESNET50_BYTES;
        long bucket = 25L << 20;
        int steps = 10;
        int warmupSteps = 1;
        boolean warmupGiven = false;
        double computeMs = 100;
        int slowRank = -1;
        double slowFactor = 1.5;
        double jitter = 0;
        double coordRate = 1000;
        boolean synthetic = false;
        long seed = 1;
        double coordLoad = 0;
        List<Integer> incast = null;
        long portBuffer = 0;
        CollectiveOptions options = CollectiveOptions.defaults();
        int rankOf = -1;
        List<InetSocketAddress> members = null;
        Path startFile = null;
        String transport = "homa";
        long linkMbps = 0;
        int homaMaxIncoming = 0;
        for (int i = 0; i < args.length; i++) {
            String v = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i]) {
                case "--op" -> { op = v.toLowerCase(Locale.ROOT); i++; }
                case "--ranks" -> { ranks = Integer.parseInt(v); i++; }
                case "--transports" -> { transports = List.of(v.split(",")); i++; }
                case "--sizes" -> { sizes = Arrays.stream(v.split(",")).map(CollectiveCommand::bytes).toList(); i++; }
                case "--min" -> { min = bytes(v); i++; }
                case "--max" -> { max = bytes(v); i++; }
                case "--sim" -> sim = true;
                case "--sim-ranks" -> { simRanks = Arrays.stream(v.split(",")).map(Integer::parseInt).toList(); i++; }
                case "--out" -> { dir = Path.of(v); i++; }
                case "--job" -> job = true;
                case "--exchange" -> {
                    parameterServer = switch (v.toLowerCase(Locale.ROOT)) {
                        case "allreduce" -> false;
                        case "ps", "parameter-server" -> true;
                        default -> throw new IllegalArgumentException("--exchange is allreduce or ps (a parameter server), not " + v);
                    };
                    i++;
                }
                case "--model" -> {
                    model = switch (v.toLowerCase(Locale.ROOT)) {
                        case "resnet50" -> RESNET50_BYTES;
                        case "bert-large" -> BERT_LARGE_BYTES;
                        default -> bytes(v);
                    };
                    i++;
                }
                case "--bucket" -> { bucket = bytes(v); i++; }
                case "--steps" -> { steps = Integer.parseInt(v); i++; }
                case "--warmup-steps" -> { warmupSteps = Integer.parseInt(v); warmupGiven = true; i++; }
                case "--compute-ms" -> { computeMs = Double.parseDouble(v); i++; }
                case "--slow-rank" -> { slowRank = Integer.parseInt(v); i++; }
                case "--slow-factor" -> { slowFactor = Double.parseDouble(v); i++; }
                case "--jitter" -> { jitter = Double.parseDouble(v); i++; }
                case "--coord-rate" -> { coordRate = Double.parseDouble(v); i++; }
                case "--synthetic" -> synthetic = true;
                case "--coord-load" -> { coordLoad = Double.parseDouble(v); i++; }
                case "--rank" -> { rankOf = Integer.parseInt(v); i++; }
                case "--members" -> {
                    members = Arrays.stream(v.split(",")).map(io.homa.bench.load.LoadNodeCommand::address).toList();
                    i++;
                }
                case "--transport" -> { transport = v; i++; }
                case "--start-file" -> { startFile = Path.of(v); i++; }
                case "--link-mbps" -> { linkMbps = Long.parseLong(v); i++; }
                case "--homa-max-incoming" -> { homaMaxIncoming = (int) bytes(v); i++; }
                case "--segment" -> { options = options.withSegmentBytes((int) bytes(v)); i++; }
                case "--window" -> { options = options.withSegmentsInFlight(Integer.parseInt(v)); i++; }
                case "--deadline" -> { options = options.withDeadline(java.time.Duration.ofSeconds(Long.parseLong(v))); i++; }
                case "--port-buffer" -> { portBuffer = bytes(v); i++; }
                case "--incast" -> { incast = Arrays.stream(v.split(",")).map(Integer::parseInt).toList(); i++; }
                case "--seed" -> { seed = Long.parseLong(v); i++; }
                case "--help" -> {
                    out.println(usage());
                    return 0;
                }
                default -> throw new IllegalArgumentException("unknown option " + args[i] + " (--help)");
            }
        }
        if (!List.of("allreduce", "broadcast", "allgather", "reducescatter").contains(op)) {
            throw new IllegalArgumentException("--op must be allreduce, broadcast, allgather or reducescatter, not " + op);
        }
        if (warmupGiven && !job) {
            throw new IllegalArgumentException("--warmup-steps is an option of --job");
        }
        if (job && warmupSteps < 1) {
            throw new IllegalArgumentException("--warmup-steps must be at least 1 (step 0 connects and starts the JIT), not "
                    + warmupSteps);
        }
        if (job && steps <= warmupSteps) {
            throw new IllegalArgumentException("--steps (" + steps + ") must be more than --warmup-steps (" + warmupSteps
                    + "): the warm-up steps are not measured");
        }
        if (parameterServer && !job) {
            throw new IllegalArgumentException("--exchange is an option of --job");
        }
        if (parameterServer && slowRank == 0) {
            throw new IllegalArgumentException("--slow-rank 0 is the parameter server, which computes nothing: name a worker (1 or more)");
        }
        if (rankOf >= 0) {
            if (members == null) {
                throw new IllegalArgumentException("--rank needs --members ip:port,ip:port,... (every rank's, in rank order)");
            }
            if (rankOf >= members.size()) {
                throw new IllegalArgumentException("--rank " + rankOf + " is not one of the " + members.size() + " --members");
            }
            if (job) {
                JobEmulation.Job j = new JobEmulation.Job(members.size(), steps, warmupSteps, (long) (computeMs * 1e6), slowRank, slowFactor,
                        jitter, model, bucket, coordRate, synthetic, seed, parameterServer);
                checkJob(j);
                Path start = startFile;
                return JobRankProcess.run(rankOf, members, transport, linkMbps, homaMaxIncoming, options, j,
                        dir == null ? null : dir.resolve("job.json"),
                        r -> {
                            if (start != null) {
                                RankProcess.awaitStart(r, start, System.err);
                            }
                        }, out);
            }
            return RankProcess.run(rankOf, members, transport, linkMbps, homaMaxIncoming,
                    sizes != null ? sizes : List.of(1L << 20, 4L << 20, 16L << 20, 64L << 20, 128L << 20), options,
                    dir == null ? null : dir.resolve("rank-" + rankOf + ".json"), startFile, out);
        }
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("op", op);
        if (job) {
            JobEmulation.Job j = new JobEmulation.Job(ranks, steps, warmupSteps, (long) (computeMs * 1e6), slowRank, slowFactor, jitter,
                    model, bucket, coordRate, synthetic, seed, parameterServer);
            checkJob(j);
            json.put("mode", "job");
            JobEmulation.header(out, j);
            List<Object> results = new ArrayList<>();
            for (String t : transports) {
                results.add(JobEmulation.run(t, j, out));
            }
            json.put("results", results);
        } else if (sim && incast != null) {
            json.put("mode", "simulator-parameter-server");
            json.put("results", SimIncast.run(incast, sizes != null ? sizes : List.of(1L << 20, 4L << 20), steps, portBuffer, out));
        } else if (sim) {
            List<Long> s = sizes != null ? sizes : List.of(100L << 20);
            json.put("mode", "simulator");
            json.put("results", SimSweep.run(op, simRanks, s, coordLoad, out));
        } else {
            List<Long> s = sizes != null ? sizes : powersOfFour(min, max);
            json.put("mode", "loopback");
            json.put("ranks", ranks);
            List<Object> results = new ArrayList<>();
            for (String t : transports) {
                results.addAll(LoopbackSweep.run(t, op, ranks, s, options, out));
            }
            json.put("results", results);
        }
        if (dir != null) {
            try {
                Files.createDirectories(dir);
                Files.writeString(dir.resolve("collective.json"), Json.write(json));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            out.println("wrote " + dir.resolve("collective.json"));
        }
        return 0;
    }

    private static void checkJob(JobEmulation.Job j) {
        if (j.ranks() < 2) {
            throw new IllegalArgumentException("a job needs at least 2 ranks, not " + j.ranks());
        }
        if (j.slowRank() >= j.ranks()) {
            throw new IllegalArgumentException("--slow-rank " + j.slowRank() + " is not one of the " + j.ranks() + " ranks");
        }
    }

    /** ResNet-50's 25.6 M parameters in fp32. */
    static final long RESNET50_BYTES = 25_600_000L * 4;
    /** BERT-large's 340 M parameters in fp32. */
    static final long BERT_LARGE_BYTES = 340_000_000L * 4;

    static String usage() {
        return "collective [--op allreduce|broadcast|allgather|reducescatter] [--ranks 4] [--transports homa,homa-inline,tcp]"
                + " [--sizes 8,1K,1M | --min 8 --max 32M] [--segment 1M] [--window 4] [--sim [--sim-ranks 16,64] [--coord-load 0.1] | --sim --incast 16,64 [--steps 10] [--port-buffer 46K]] [--out DIR]\n"
                + "collective --job [--model resnet50|bert-large|BYTES] [--bucket 25M] [--steps 10] [--warmup-steps 1] [--compute-ms 100]"
                + " [--slow-rank R --slow-factor 1.5] [--jitter 0.1] [--coord-rate 1000] [--synthetic] [--seed 1]"
                + " [--exchange allreduce|ps] [--deadline SECONDS] [--ranks 4] [--transports homa,homa-inline,tcp] [--out DIR]\n"
                + "collective --rank R --members IP:PORT,... [--transport homa|homa-inline|tcp] [--link-mbps M] [--homa-max-incoming BYTES]"
                + " [--sizes ... | --job [job options]] [--start-file PATH] [--out DIR]"
                + "  (one rank per process: scripts/collective-testbed; with --job, run it with -Dhoma.bench.host=its address)";
    }

    private static List<Long> powersOfFour(long min, long max) {
        List<Long> s = new ArrayList<>();
        for (long b = min; b <= max; b *= 4) {
            s.add(b);
        }
        return s;
    }

    static long bytes(String v) {
        String t = v.trim().toUpperCase(Locale.ROOT).replace("B", "");
        long mult = 1;
        if (t.endsWith("K")) {
            mult = 1L << 10;
        } else if (t.endsWith("M")) {
            mult = 1L << 20;
        } else if (t.endsWith("G")) {
            mult = 1L << 30;
        }
        if (mult != 1) {
            t = t.substring(0, t.length() - 1);
        }
        return Long.parseLong(t) * mult;
    }

    /** nccl-tests' bus-bandwidth factor: what each rank's link carries relative to S. */
    static double busFactor(String op, int n) {
        return switch (op) {
            case "allreduce" -> 2.0 * (n - 1) / n;
            case "allgather", "reducescatter" -> (n - 1.0) / n;
            default -> 1.0; // broadcast
        };
    }

    static String size(long b) {
        if (b >= 1L << 20 && b % (1L << 20) == 0) {
            return (b >> 20) + "M";
        }
        if (b >= 1L << 10 && b % (1L << 10) == 0) {
            return (b >> 10) + "K";
        }
        return Long.toString(b);
    }
}
