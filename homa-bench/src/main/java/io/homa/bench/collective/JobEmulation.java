package io.homa.bench.collective;

import io.homa.HomaConfig;
import io.homa.HomaSocket;
import io.homa.bench.EchoClient;
import io.homa.bench.EchoServer;
import io.homa.bench.NettyIo;
import io.homa.bench.Transport;
import io.homa.bench.Transports;
import io.homa.collective.CollectiveBuffer;
import io.homa.collective.CollectiveGroup;
import io.homa.collective.CollectiveOptions;
import io.homa.collective.DataType;
import io.homa.collective.ReduceOp;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A data-parallel training job, emulated: every rank runs K steps of compute (a sleep: the GPU's
 * time, which takes no CPU from the network), optionally one slow rank or random jitter; the
 * backward two thirds of a step make the gradient buckets ready one after another (in 25 MiB
 * buckets, as PyTorch DDP does) and each bucket's all-reduce starts the moment it is ready,
 * overlapped with the rest of the backward pass; the step ends when its compute is done and every
 * bucket is reduced (the optimizer needs them all). With a parameter server instead, rank 0 only
 * serves and every other rank pushes each bucket to it and pulls it back (one RPC per
 * {@link #PUSH_CHUNK} bytes: request and answer of that size), and every step starts for all
 * ranks together (a barrier: synchronous training, as {@code collective --sim --incast} models
 * it): the incast of a parameter server. Beside it, coordination RPCs (100 B to 4 KB
 * echoes between random ranks, Poisson arrivals at a set rate, the same seed for every transport)
 * on an RPC socket of each rank's own, over the same kind of transport (Homa's default socket, or
 * one TCP connection per pair).
 *
 * <p>Reports the step time p50/p99, the job's completion time, the fraction of each step a rank
 * waits on the network after its compute, and the coordination RPCs' p50/p99 while an all-reduce is
 * running and overall, all of them after the warm-up steps ({@code Job.warmupSteps}: the steps,
 * and the calls sent before the first measured step, are left out; the job's completion time and
 * failed calls are not). Here all ranks run in this JVM; {@link JobRankProcess} runs one rank per
 * process (the testbed).
 */
final class JobEmulation {
    /** What a job is. */
    record Job(int ranks, int steps, int warmupSteps, long computeNanos, int slowRank, double slowFactor, double jitter,
               long modelBytes, long bucketBytes, double coordPerSecond, boolean synthetic, long seed,
               boolean parameterServer) {
        /** Whether {@code rank} computes and exchanges gradients (in a parameter-server job rank 0 only serves). */
        boolean isWorker(int rank) {
            return !parameterServer || rank != 0;
        }

        int buckets() {
            return (int) ((modelBytes + bucketBytes - 1) / bucketBytes);
        }
    }

    /**
     * A push to the parameter server is sent in calls of at most this many bytes (about Linux
     * Homa's limit on a message, 1,000,000 bytes); a bucket's calls all go at once.
     */
    static final int PUSH_CHUNK = 1 << 20;
    /** How long a push may wait for its pull before the step fails (over TCP nothing else bounds it). */
    static final long PUSH_TIMEOUT_SECONDS = 60;

    private JobEmulation() {
    }

    static Map<String, Object> run(String transport, Job job, PrintStream out) {
        int n = job.ranks();
        List<HomaSocket> sockets = new ArrayList<>();
        List<CollectiveGroup> groups = new ArrayList<>();
        List<InetSocketAddress> members = new ArrayList<>();
        Transport rpc = Transports.create(transport.startsWith("homa") ? Transports.HOMA : Transports.TCP_SINGLE);
        List<EchoServer> servers = new ArrayList<>();
        List<List<EchoClient>> clients = new ArrayList<>();
        List<EchoClient> pushClients = new ArrayList<>();
        try {
            if (transport.startsWith("homa")) {
                for (int i = 0; i < n; i++) {
                    HomaSocket s = HomaSocket.open(HomaConfig.builder().bindAddress(new InetSocketAddress(NettyIo.HOST, 0))
                            .inlineExecution(transport.equals("homa-inline")).build());
                    sockets.add(s);
                    members.add(new InetSocketAddress(NettyIo.HOST, s.localAddress().getPort()));
                }
                for (int r = 0; r < n; r++) {
                    groups.add(CollectiveGroup.overHoma(sockets.get(r), members, r, CollectiveOptions.defaults()));
                }
            } else {
                for (int i = 0; i < n; i++) {
                    members.add(new InetSocketAddress(NettyIo.HOST, freePort()));
                }
                for (int r = 0; r < n; r++) {
                    groups.add(CollectiveGroup.overTcp(members, r, CollectiveOptions.defaults()));
                }
            }
            for (int r = 0; r < n; r++) {
                servers.add(rpc.startServer());
            }
            for (int r = 0; r < n; r++) {
                List<EchoClient> mine = new ArrayList<>();
                for (int p = 0; p < n; p++) {
                    mine.add(p == r ? null : rpc.connect(servers.get(p).address()));
                }
                clients.add(mine);
                // A worker's pushes travel on a client of their own, so that its coordination
                // RPCs to rank 0 do not queue behind them on one TCP connection.
                pushClients.add(job.parameterServer() && r != 0 ? rpc.connect(servers.get(0).address()) : null);
            }
            return measure(transport, job, groups, clients, pushClients, out);
        } finally {
            pushClients.forEach(c -> {
                if (c != null) {
                    c.close();
                }
            });
            clients.forEach(l -> l.forEach(c -> {
                if (c != null) {
                    c.close();
                }
            }));
            servers.forEach(EchoServer::close);
            groups.forEach(CollectiveGroup::close);
            sockets.forEach(HomaSocket::close);
        }
    }

    private static Map<String, Object> measure(String transport, Job job, List<CollectiveGroup> groups,
                                               List<List<EchoClient>> clients, List<EchoClient> pushClients, PrintStream out) {
        int n = job.ranks();
        AtomicInteger reducing = new AtomicInteger();
        long[][] stepNanos = new long[n][job.steps()];
        long[][] waitNanos = new long[n][job.steps()];
        Coordination coordination = new Coordination();
        long start = System.nanoTime();
        SplittableRandom arrivals = new SplittableRandom(job.seed());
        Thread coordinator = new Thread(() -> coordinate(job.coordPerSecond(), n, arrivals, () -> arrivals.nextInt(n), clients,
                reducing, coordination), "coordination");
        coordinator.setDaemon(true);
        coordinator.start();
        List<CompletableFuture<Object>> ranks = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int rank = r;
            ranks.add(onThread("rank-" + rank, () -> {
                runRank(job, rank, groups.get(rank), pushClients.get(rank), reducing, coordination::startMeasuring,
                        stepNanos[rank], waitNanos[rank]);
                return null;
            }));
        }
        try {
            CompletableFuture.allOf(ranks.toArray(new CompletableFuture[0])).join();
        } finally {
            coordination.stop(); // also when a rank failed: the clients close next
        }
        long jct = System.nanoTime() - start;
        try {
            coordinator.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        coordination.awaitAnswers();
        if (!coordination.causes.isEmpty()) {
            System.err.println(transport + ": coordination RPCs failed: " + coordination.causes);
        }
        return summarize(transport, job, stepNanos, waitNanos, coordination.during, coordination.all, coordination.failed.get(),
                coordination.failedInWarmup.get(), jct, out);
    }

    /** The job's figures from every rank's step and wait times (workers only) and the coordination RPCs' latencies. */
    static Map<String, Object> summarize(String transport, Job job, long[][] stepNanos, long[][] waitNanos, Histogram coordDuring,
                                         Histogram coordAll, long coordFailed, long coordFailedInWarmup, long jct,
                                         PrintStream out) {
        int n = job.ranks();
        // The first steps warm the path up (step 0 connects; the JIT compiles for many seconds,
        // in every JVM at once on the testbed); the rest are the job's steady state.
        List<Long> stepList = new ArrayList<>();
        double waitFraction = 0;
        int counted = 0;
        for (int r = 0; r < n; r++) {
            if (!job.isWorker(r)) {
                continue;
            }
            for (int s = job.warmupSteps(); s < job.steps(); s++) {
                stepList.add(stepNanos[r][s]);
                waitFraction += (double) waitNanos[r][s] / stepNanos[r][s];
                counted++;
            }
        }
        long[] steps = stepList.stream().mapToLong(Long::longValue).sorted().toArray();
        waitFraction /= Math.max(1, counted);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("transport", transport);
        m.put("exchange", job.parameterServer() ? "parameter-server" : "allreduce");
        m.put("ranks", n);
        m.put("steps", job.steps());
        m.put("warmup_steps", job.warmupSteps());
        m.put("model_bytes", job.modelBytes());
        m.put("buckets", job.buckets());
        m.put("compute_ms", job.computeNanos() / 1e6);
        m.put("slow_rank", job.slowRank());
        m.put("slow_factor", job.slowFactor());
        m.put("jitter", job.jitter());
        m.put("synthetic", job.synthetic());
        m.put("step_p50_ms", pct(steps, 0.50) / 1e6);
        m.put("step_p99_ms", pct(steps, 0.99) / 1e6);
        m.put("job_completion_s", jct / 1e9);
        m.put("network_wait_fraction", waitFraction);
        m.put("coord_per_s", job.coordPerSecond());
        m.put("coord_during_allreduce_count", coordDuring.getTotalCount());
        m.put("coord_during_allreduce_p50_us", coordDuring.getValueAtPercentile(50) / 1e3);
        m.put("coord_during_allreduce_p99_us", coordDuring.getValueAtPercentile(99) / 1e3);
        m.put("coord_all_count", coordAll.getTotalCount());
        m.put("coord_all_p99_us", coordAll.getValueAtPercentile(99) / 1e3);
        m.put("coord_failed", coordFailed);
        m.put("coord_failed_in_warmup", coordFailedInWarmup);
        out.printf(Locale.ROOT, "%-12s %9.1f %9.1f %8.2f %7.1f%% %8d %11.0f %11.0f %8d%n", transport,
                pct(steps, 0.50) / 1e6, pct(steps, 0.99) / 1e6, jct / 1e9, waitFraction * 100,
                coordDuring.getTotalCount(), coordDuring.getValueAtPercentile(50) / 1e3,
                coordDuring.getValueAtPercentile(99) / 1e3, coordFailed);
        if (coordFailed > 0) {
            out.printf(Locale.ROOT, "%-12s %d of the %d failed coordination RPCs were sent during the %d warm-up step(s)%n",
                    transport + ":", coordFailedInWarmup, coordFailed, job.warmupSteps());
        }
        return m;
    }

    static void header(PrintStream out, Job job) {
        out.printf(Locale.ROOT, "%njob: %d ranks, %d steps (the first %d not measured), %.0f ms compute, model %s in %s buckets, %s%s%s, %.0f coordination RPCs/s%n",
                job.ranks(), job.steps(), job.warmupSteps(), job.computeNanos() / 1e6, CollectiveCommand.size(job.modelBytes()),
                CollectiveCommand.size(job.bucketBytes()),
                job.parameterServer() ? "pushed to and pulled from rank 0 (a parameter server)" : "all-reduced",
                job.slowRank() >= 0 ? ", rank " + job.slowRank() + " " + job.slowFactor() + "x slower" : "",
                job.jitter() > 0 ? ", jitter " + job.jitter() : "", job.coordPerSecond());
        out.printf(Locale.ROOT, "%-12s %9s %9s %8s %8s %8s %11s %11s %8s%n", "transport", "step p50", "step p99",
                "JCT s", "net wait", "coord n", "coord p50us", "coord p99us", "failed");
    }

    /**
     * One rank's steps: compute, and each gradient bucket exchanged the moment the backward pass
     * makes it ready (all-reduced in the group, or pushed to the parameter server, rank 0, whose
     * answer is the pull); the step ends when its compute is done and every bucket is back. In a
     * parameter-server job every step starts with the group's barrier (the pulls of the last step
     * are all back), and rank 0 only meets the others there (its RPC socket serves the pushes).
     * Every all-reduced sum is checked; a pull must bring back as many bytes as were pushed (the
     * server echoes: the traffic of a parameter server, not its arithmetic).
     */
    static void runRank(Job job, int rank, CollectiveGroup g, EchoClient push, AtomicInteger reducing, Runnable warmedUp,
                        long[] stepNanos, long[] waitNanos) {
        if (!job.isWorker(rank)) {
            for (int s = 0; s < job.steps(); s++) {
                g.barrier().join(); // the server's part of each step's start
                if (s == job.warmupSteps()) {
                    warmedUp.run(); // every worker has begun step s
                }
            }
            return;
        }
        int buckets = job.buckets();
        SplittableRandom random = new SplittableRandom(job.seed() * 31 + rank);
        CollectiveBuffer[] grads = new CollectiveBuffer[buckets];
        float[][] arrays = new float[buckets][];
        long[] bucketBytes = new long[buckets];
        for (int b = 0; b < buckets; b++) {
            bucketBytes[b] = Math.min(job.bucketBytes(), job.modelBytes() - (long) b * job.bucketBytes());
            int elements = (int) (bucketBytes[b] / 4);
            if (job.parameterServer()) {
                continue; // pushes are sent from shared chunks (below)
            }
            if (job.synthetic()) {
                grads[b] = CollectiveBuffer.synthetic(DataType.FLOAT, elements);
            } else {
                arrays[b] = new float[elements];
                grads[b] = CollectiveBuffer.of(arrays[b]);
            }
        }
        PushChunks chunks = job.parameterServer() ? new PushChunks(rank) : null;
        for (int s = 0; s < job.steps(); s++) {
            double factor = rank == job.slowRank() ? job.slowFactor() : 1.0;
            if (job.jitter() > 0) {
                factor *= 1 + job.jitter() * (random.nextDouble() * 2 - 1);
            }
            long compute = (long) (job.computeNanos() * factor);
            if (job.parameterServer()) {
                g.barrier().join(); // synchronous training: every worker has its parameters
            }
            if (s == job.warmupSteps()) {
                warmedUp.run(); // (after the barrier: with a parameter server, every rank is in step s)
            }
            long t0 = System.nanoTime();
            sleep(compute / 3); // forward
            List<CompletableFuture<Void>> pending = new ArrayList<>();
            for (int b = 0; b < buckets; b++) { // backward: buckets become ready one after another
                sleep(2 * compute / 3 / buckets);
                if (arrays[b] != null) {
                    Arrays.fill(arrays[b], rank + 1); // this step's gradients
                }
                reducing.incrementAndGet();
                CompletableFuture<Void> exchanged = job.parameterServer() ? chunks.pushAndPull(push, bucketBytes[b])
                        : g.allReduce(grads[b], ReduceOp.SUM);
                pending.add(exchanged.whenComplete((v, e) -> reducing.decrementAndGet()));
            }
            long computeDone = System.nanoTime();
            CompletableFuture.allOf(pending.toArray(new CompletableFuture[0])).join();
            long end = System.nanoTime();
            stepNanos[s] = end - t0;
            waitNanos[s] = end - computeDone;
            if (arrays[0] != null) {
                float want = job.ranks() * (job.ranks() + 1) / 2f;
                for (float[] a : arrays) {
                    if (a[0] != want || a[a.length - 1] != want) {
                        throw new IllegalStateException("rank " + rank + " step " + s + ": gradient sum " + a[0] + ", not " + want);
                    }
                }
            }
        }
    }

    /**
     * Runs {@code work} on a daemon thread of its own (a rank blocks in joins, so it gets a thread,
     * not a pool's); the future completes with its result or what it threw.
     */
    static <T> CompletableFuture<T> onThread(String name, java.util.concurrent.Callable<T> work) {
        CompletableFuture<T> done = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                done.complete(work.call());
            } catch (Throwable e) {
                done.completeExceptionally(e);
            }
        }, name);
        t.setDaemon(true);
        t.start();
        return done;
    }

    /**
     * A worker's pushes: a bucket goes as calls of {@link #PUSH_CHUNK} bytes (the last shorter), all
     * at once, from arrays made once (a bucket's last chunk has the same length every step). The
     * rank's thread alone uses it.
     */
    private static final class PushChunks {
        private final byte[] full = new byte[PUSH_CHUNK];
        private final Map<Integer, byte[]> shorter = new java.util.HashMap<>();
        private final int rank;

        PushChunks(int rank) {
            this.rank = rank;
            Arrays.fill(full, (byte) rank);
        }

        CompletableFuture<Void> pushAndPull(EchoClient server, long bytes) {
            List<CompletableFuture<byte[]>> calls = new ArrayList<>();
            for (long off = 0; off < bytes; off += PUSH_CHUNK) {
                int len = (int) Math.min(PUSH_CHUNK, bytes - off);
                byte[] chunk = len == PUSH_CHUNK ? full : shorter.computeIfAbsent(len, l -> Arrays.copyOf(full, l));
                calls.add(server.call(chunk).orTimeout(PUSH_TIMEOUT_SECONDS, TimeUnit.SECONDS).thenApply(pulled -> {
                    if (pulled.length != len) {
                        throw new IllegalStateException("rank " + rank + ": pulled " + pulled.length + " bytes for a push of " + len);
                    }
                    return pulled;
                }));
            }
            return CompletableFuture.allOf(calls.toArray(new CompletableFuture[0]));
        }
    }

    /** The coordination RPCs' latencies, while an exchange runs and overall, and what failed. */
    static final class Coordination {
        final Histogram during = new Histogram(3);
        final Histogram all = new Histogram(3);
        final AtomicInteger failed = new AtomicInteger();
        /** Of {@link #failed}, the calls sent before the first measured step. */
        final AtomicInteger failedInWarmup = new AtomicInteger();
        /** Why calls failed: the cause's class and the pair of ranks, with how many (for the logs). */
        final java.util.concurrent.ConcurrentHashMap<String, java.util.concurrent.atomic.LongAdder> causes =
                new java.util.concurrent.ConcurrentHashMap<>();
        private final AtomicInteger inFlight = new AtomicInteger();
        private volatile boolean stopped;
        /**
         * Whether the warm-up steps are over: latencies are recorded from then on only (during the
         * warm-up the JIT compiles in every JVM at once, which is not the transport's tail); a
         * failed call counts whenever it was sent.
         */
        private volatile boolean measuring;

        void stop() {
            stopped = true;
        }

        /** A rank has begun its first measured step. */
        void startMeasuring() {
            measuring = true;
        }

        /** Waits (at most the calls' own 5 s bound and a little) until every call sent has its answer or failed. */
        void awaitAnswers() {
            long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(7);
            while (inFlight.get() > 0 && System.nanoTime() - giveUp < 0) {
                LockSupport.parkNanos(1_000_000); // a bounded drain at the end of a run
            }
        }
    }

    /**
     * Sends coordination RPCs (100 B to 4 KB, Poisson arrivals at {@code perSecond}, from a source
     * {@code source} picks to a random other rank) until {@code coordination} stops.
     */
    static void coordinate(double perSecond, int n, SplittableRandom random, java.util.function.IntSupplier source,
                           List<List<EchoClient>> clients, AtomicInteger reducing, Coordination coordination) {
        if (perSecond <= 0 || n < 2) {
            return;
        }
        double meanGap = 1e9 / perSecond;
        long next = System.nanoTime();
        while (!coordination.stopped) {
            next += (long) (-Math.log(1 - random.nextDouble()) * meanGap);
            long wait = next - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
            }
            int src = source.getAsInt();
            int dst = (src + 1 + random.nextInt(n - 1)) % n;
            byte[] request = new byte[100 + random.nextInt(4_000 - 100 + 1)];
            boolean duringReduce = reducing.get() > 0;
            boolean measured = coordination.measuring;
            long t0 = System.nanoTime();
            coordination.inFlight.incrementAndGet();
            clients.get(src).get(dst).call(request).orTimeout(5, TimeUnit.SECONDS).whenComplete((reply, e) -> {
                long ns = System.nanoTime() - t0;
                if (e != null) {
                    coordination.failed.incrementAndGet();
                    if (!measured) {
                        coordination.failedInWarmup.incrementAndGet();
                    }
                    Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
                    coordination.causes.computeIfAbsent(cause.getClass().getSimpleName() + " " + src + "->" + dst,
                            k -> new java.util.concurrent.atomic.LongAdder()).increment();
                } else if (measured) {
                    synchronized (coordination.all) {
                        coordination.all.recordValue(ns);
                        if (duringReduce) {
                            coordination.during.recordValue(ns);
                        }
                    }
                }
                coordination.inFlight.decrementAndGet();
            });
        }
    }

    private static void sleep(long nanos) {
        long end = System.nanoTime() + nanos;
        long left;
        while ((left = end - System.nanoTime()) > 0) {
            LockSupport.parkNanos(left);
        }
    }

    private static long pct(long[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(sorted.length * p) - 1)];
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
