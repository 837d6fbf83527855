package io.homa.bench.collective;

import io.homa.HomaConfig;
import io.homa.HomaSocket;
import io.homa.bench.Json;
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
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One rank of an all-reduce sweep in a process of its own (one per testbed host:
 * scripts/collective-testbed starts them). Between iterations the ranks meet in the group's own
 * barrier (not timed); each iteration's time is this rank's; rank 0 prints the table. Every
 * result is checked.
 */
final class RankProcess {
    private RankProcess() {
    }

    static int run(int rank, List<InetSocketAddress> members, String transport, long linkMbps, int maxIncoming,
                   List<Long> sizes, CollectiveOptions options, Path outFile, Path startFile, PrintStream out) {
        int n = members.size();
        Member me = join(rank, members, transport, linkMbps, maxIncoming, options);
        CollectiveGroup g = me.group();
        List<Object> results = new ArrayList<>();
        try {
            if (startFile != null) {
                awaitStart(rank, startFile, System.err);
            }
            g.barrier().join(); // everyone is up
            float[] warm = new float[1 << 18];
            for (int i = 0; i < 10; i++) {
                g.allReduce(warm, ReduceOp.SUM).join();
            }
            if (rank == 0) {
                out.printf(Locale.ROOT, "%n%s, %d ranks, one per host, all-reduce of floats%n", transport, n);
                out.printf(Locale.ROOT, "%10s %6s %10s %10s %10s %9s %9s%n", "size", "iters", "min ms", "p50 ms", "max ms",
                        "algbw", "busbw");
            }
            for (long size : sizes) {
                int elements = (int) Math.max(1, size / 4);
                int iters = (int) Math.max(3, Math.min(20, (256L << 20) / Math.max(1, size)));
                float[] a = new float[elements];
                long[] t = new long[iters];
                float want = n * (n + 1) / 2f;
                for (int i = 0; i < iters; i++) {
                    Arrays.fill(a, rank + 1);
                    g.barrier().join();
                    long t0 = System.nanoTime();
                    g.allReduce(a, ReduceOp.SUM).join();
                    t[i] = System.nanoTime() - t0;
                    for (int k = 0; k < a.length; k++) {
                        if (a[k] != want) {
                            throw new IllegalStateException("rank " + rank + ": element " + k + " is " + a[k] + ", not " + want);
                        }
                    }
                }
                Arrays.sort(t);
                double p50 = t[t.length / 2] / 1e6;
                double algbw = elements * 4.0 / (p50 * 1e6);
                double busbw = algbw * CollectiveCommand.busFactor("allreduce", n);
                if (rank == 0) {
                    out.printf(Locale.ROOT, "%10s %6d %10.2f %10.2f %10.2f %7.4fGB/s %6.4fGB/s%n",
                            CollectiveCommand.size(elements * 4L), iters, t[0] / 1e6, p50, t[t.length - 1] / 1e6, algbw, busbw);
                }
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("transport", transport);
                m.put("rank", rank);
                m.put("ranks", n);
                m.put("bytes", elements * 4L);
                m.put("iterations", iters);
                m.put("time_min_ms", t[0] / 1e6);
                m.put("time_p50_ms", p50);
                m.put("time_max_ms", t[t.length - 1] / 1e6);
                m.put("algbw_gbytes_per_s", algbw);
                m.put("busbw_gbytes_per_s", busbw);
                m.put("checked", true);
                results.add(m);
            }
            g.barrier().join(); // nobody leaves while another still needs it
        } finally {
            me.close();
        }
        if (outFile != null) {
            try {
                Map<String, Object> json = new LinkedHashMap<>();
                json.put("mode", "testbed-rank");
                json.put("link_mbps", linkMbps);
                json.put("homa_max_incoming", maxIncoming);
                json.put("results", results);
                Files.writeString(outFile, Json.write(json));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return 0;
    }

    /** This process's rank in the group, and the Homa socket under it (null over TCP). */
    record Member(CollectiveGroup group, HomaSocket socket) implements AutoCloseable {
        @Override
        public void close() {
            group.close();
            if (socket != null) {
                socket.close();
            }
        }
    }

    /**
     * Joins the group as {@code rank}: over Homa ({@code homa}: the default configuration;
     * {@code homa-inline}: with inlineExecution) with the testbed's link rate and grant budget if
     * given, or over TCP.
     */
    static Member join(int rank, List<InetSocketAddress> members, String transport, long linkMbps, int maxIncoming,
                       CollectiveOptions options) {
        if (transport.equals("homa") || transport.equals("homa-inline")) {
            HomaConfig.Builder b = HomaConfig.builder().bindAddress(members.get(rank))
                    .inlineExecution(transport.equals("homa-inline"));
            if (linkMbps > 0) {
                b.linkMbps(linkMbps); // the testbed's link rate, as docs/tuning.md says to set it
            }
            if (maxIncoming > 0) {
                b.maxIncoming(maxIncoming); // the grant budget (default: derived from the MTU and the link, HomaConfig.Builder.maxIncoming)
            }
            HomaSocket socket = HomaSocket.open(b.build());
            try {
                return new Member(CollectiveGroup.overHoma(socket, members, rank, options), socket);
            } catch (RuntimeException e) {
                socket.close();
                throw e;
            }
        } else if (transport.equals("tcp")) {
            return new Member(CollectiveGroup.overTcp(members, rank, options), null);
        }
        throw new IllegalArgumentException("--transport is homa, homa-inline or tcp, not " + transport);
    }

    /** How long a rank waits for its start signal: JVMs started together on a busy machine come up seconds apart. */
    static final java.time.Duration START_WINDOW = java.time.Duration.ofSeconds(120);

    /**
     * Says this rank is up (serving its socket), then waits until {@code startFile} exists: the
     * script creates it once every rank said so. A first barrier alone is not enough: a peer
     * whose socket is not open yet is silent, and a call to it fails after the calling socket's
     * silence timeout (a fraction of a second), sooner than a JVM started beside busy ones may be
     * listening; and ranks that retried a failed barrier could meet in different operations.
     */
    static void awaitStart(int rank, Path startFile, PrintStream err) {
        err.println("collective rank " + rank + " is up");
        err.flush();
        long giveUp = System.nanoTime() + START_WINDOW.toNanos();
        while (!java.nio.file.Files.exists(startFile)) {
            if (System.nanoTime() - giveUp > 0) {
                throw new IllegalStateException("rank " + rank + ": no start signal (" + startFile + ") within " + START_WINDOW);
            }
            java.util.concurrent.locks.LockSupport.parkNanos(10_000_000); // polls a file the script writes
        }
    }
}
