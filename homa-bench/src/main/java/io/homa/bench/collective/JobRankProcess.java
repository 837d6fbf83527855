package io.homa.bench.collective;

import io.homa.bench.EchoClient;
import io.homa.bench.EchoServer;
import io.homa.bench.HomaTransport;
import io.homa.bench.Json;
import io.homa.bench.NettyIo;
import io.homa.bench.Transport;
import io.homa.bench.Transports;
import io.homa.collective.CollectiveGroup;
import io.homa.collective.CollectiveOptions;
import io.homa.collective.ReduceOp;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One rank of the emulated training job ({@link JobEmulation}) in a process of its own: one per
 * testbed host (scripts/collective-testbed --job). The rank joins the group on its member address,
 * serves coordination RPCs (and, as rank 0 of a parameter-server job, the pushes) on the next
 * port (over Homa one socket that also makes the rank's calls; over TCP a server and a connection
 * per peer), and sends its share of the coordination RPCs ({@code coordPerSecond / n}, arrivals seeded
 * by the job's seed and the rank) to random other ranks; a call counts as "during an exchange"
 * when its own rank had a bucket in flight as it left (in one JVM: when any rank had; so in a
 * parameter-server job rank 0's calls never count). After the last step the ranks add their
 * figures up with the group's own all-reduce (step and wait times in one slot per rank, latencies
 * in {@link LatencyBuckets}); rank 0 prints the job's line and writes the JSON.
 *
 * <p>The RPC sockets bind to {@link NettyIo#HOST}: run the process with
 * {@code -Dhoma.bench.host=} its member address. Over Homa they are the bench's {@code homa}
 * transport's sockets (an inline echo handler) with the group's link rate and grant budget.
 */
final class JobRankProcess {
    private JobRankProcess() {
    }

    /**
     * @param awaitStart called with this rank once its sockets serve, returns when all ranks may
     *                   start (scripts/collective-testbed: a start file; tests: a barrier)
     */
    static int run(int rank, List<InetSocketAddress> members, String transport, long linkMbps, int maxIncoming,
                   CollectiveOptions options, JobEmulation.Job job, Path outFile,
                   java.util.function.IntConsumer awaitStart, PrintStream out) {
        int n = members.size();
        if (job.ranks() != n) {
            throw new IllegalArgumentException("the job has " + job.ranks() + " ranks but --members lists " + n);
        }
        if (!NettyIo.HOST.equals(members.get(rank).getAddress())) {
            throw new IllegalArgumentException("rank " + rank + " is " + members.get(rank).getAddress()
                    + ": run it with -D" + NettyIo.HOST_PROPERTY + "=" + members.get(rank).getAddress().getHostAddress()
                    + " (its RPC sockets bind there; now " + NettyIo.HOST.getHostAddress() + ")");
        }
        if (maxIncoming > 0) {
            // The RPC sockets (a parameter server's pushes arrive on rank 0's) get the group's grant budget.
            System.setProperty("homa.bench.maxIncoming", Integer.toString(maxIncoming));
        }
        if (linkMbps > 0 && System.getProperty("homa.bench.linkMbps") == null) {
            System.setProperty("homa.bench.linkMbps", Long.toString(linkMbps)); // and its link rate
        }
        Transport rpc = Transports.create(transport.startsWith("homa") ? Transports.HOMA : Transports.TCP_SINGLE);
        List<EchoClient> mine = new ArrayList<>();
        EchoClient push = null;
        try (RankProcess.Member me = RankProcess.join(rank, members, transport, linkMbps, maxIncoming, options);
             EchoServer server = rpc instanceof HomaTransport homa ? homa.startSharedServer(rpcPort(members.get(rank)))
                     : rpc.startServer(rpcPort(members.get(rank)))) {
            CollectiveGroup g = me.group();
            awaitStart.accept(rank);
            g.barrier().join(); // every rank (and its RPC server) is up
            // Over Homa the RPC socket calls every peer itself (one socket per process, as a user would
            // have it); over TCP a connection per peer, and one more for a worker's pushes so that
            // its coordination RPCs to rank 0 do not queue behind them.
            java.util.function.Function<InetSocketAddress, EchoClient> connect = server instanceof HomaTransport.SharedSocket shared
                    ? shared::clientTo : rpc::connect;
            for (int p = 0; p < n; p++) {
                mine.add(p == rank ? null : connect.apply(rpcAddress(members.get(p))));
            }
            if (job.parameterServer() && rank != 0) {
                push = connect.apply(rpcAddress(members.get(0)));
            }
            List<List<EchoClient>> clients = new ArrayList<>();
            for (int p = 0; p < n; p++) {
                clients.add(p == rank ? mine : null); // this process sends from its own rank only
            }
            AtomicInteger exchanging = new AtomicInteger();
            long[] stepNanos = new long[job.steps()];
            long[] waitNanos = new long[job.steps()];
            JobEmulation.Coordination coordination = new JobEmulation.Coordination();
            g.barrier().join(); // the job starts together
            long start = System.nanoTime();
            SplittableRandom arrivals = new SplittableRandom(job.seed() * 1_000_003L + rank);
            Thread coordinator = new Thread(() -> JobEmulation.coordinate(job.coordPerSecond() / n, n, arrivals, () -> rank,
                    clients, exchanging, coordination), "coordination");
            coordinator.setDaemon(true);
            coordinator.start();
            try {
                JobEmulation.runRank(job, rank, g, push, exchanging, coordination::startMeasuring, stepNanos, waitNanos);
                g.barrier().join(); // every rank has finished its steps: the job is complete
            } finally {
                coordination.stop(); // also when the job failed: the clients close below
            }
            long jct = System.nanoTime() - start;
            coordinator.join(10_000);
            coordination.awaitAnswers();
            if (!coordination.causes.isEmpty()) {
                System.err.println("rank " + rank + ": coordination RPCs failed (cause, from->to: count): " + coordination.causes);
            }
            g.barrier().join(); // no rank closes its RPC server while another's calls may still reach it

            // Everyone's figures to everyone: one slot per rank in the step and wait times, latency buckets summed.
            long[] steps = new long[n * job.steps()];
            long[] waits = new long[n * job.steps()];
            System.arraycopy(stepNanos, 0, steps, rank * job.steps(), job.steps());
            System.arraycopy(waitNanos, 0, waits, rank * job.steps(), job.steps());
            long[] during;
            long[] all;
            synchronized (coordination.all) {
                during = LatencyBuckets.of(coordination.during);
                all = LatencyBuckets.of(coordination.all);
            }
            long[] failed = {coordination.failed.get(), coordination.failedInWarmup.get()};
            for (long[] a : List.of(steps, waits, during, all, failed)) {
                g.allReduce(a, ReduceOp.SUM).join();
            }
            if (rank == 0) {
                long[][] stepsByRank = new long[n][];
                long[][] waitsByRank = new long[n][];
                for (int r = 0; r < n; r++) {
                    stepsByRank[r] = java.util.Arrays.copyOfRange(steps, r * job.steps(), (r + 1) * job.steps());
                    waitsByRank[r] = java.util.Arrays.copyOfRange(waits, r * job.steps(), (r + 1) * job.steps());
                }
                JobEmulation.header(out, job);
                Map<String, Object> m = JobEmulation.summarize(transport, job, stepsByRank, waitsByRank,
                        LatencyBuckets.toHistogram(during), LatencyBuckets.toHistogram(all), failed[0], failed[1], jct, out);
                m.put("link_mbps", linkMbps);
                m.put("one_rank_per_process", true);
                if (outFile != null) {
                    Map<String, Object> json = new LinkedHashMap<>();
                    json.put("mode", "testbed-job");
                    json.put("results", List.of(m));
                    Files.createDirectories(outFile.toAbsolutePath().getParent());
                    Files.writeString(outFile, Json.write(json));
                }
            }
            g.barrier().join(); // nobody leaves while another still needs the group
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("rank " + rank + " interrupted", e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            mine.forEach(c -> {
                if (c != null) {
                    c.close();
                }
            });
            if (push != null) {
                push.close();
            }
        }
        return 0;
    }

    /** Where a member serves RPCs: its group port plus one. */
    static int rpcPort(InetSocketAddress member) {
        return member.getPort() + 1;
    }

    private static InetSocketAddress rpcAddress(InetSocketAddress member) {
        return new InetSocketAddress(member.getAddress(), rpcPort(member));
    }
}
