package io.homa.bench.collective;

import io.homa.HomaConfig;
import io.homa.HomaSocket;
import io.homa.bench.NettyIo;
import io.homa.collective.CollectiveBuffer;
import io.homa.collective.CollectiveGroup;
import io.homa.collective.CollectiveOptions;
import io.homa.collective.ReduceOp;

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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;

/**
 * N ranks in this JVM, each its own socket (Homa with the default configuration, or TCP), each
 * driven by a thread of its own. An iteration: every rank fills its data, the threads meet, each
 * times its operation; the iteration's time is the slowest rank's. Then every rank's result is
 * checked against the direct computation (outside the timing). A 2 s warm-up of small and mid-size
 * operations comes first, so that the JIT has compiled the path before anything is timed.
 */
final class LoopbackSweep {
    private LoopbackSweep() {
    }

    static List<Object> run(String transport, String op, int n, List<Long> sizes, CollectiveOptions options, PrintStream out) {
        List<HomaSocket> sockets = new ArrayList<>();
        List<InetSocketAddress> members = new ArrayList<>();
        List<CollectiveGroup> groups = new ArrayList<>();
        try {
            if (transport.equals("homa") || transport.equals("homa-inline")) {
                for (int i = 0; i < n; i++) {
                    // homa: the default configuration; homa-inline: the group's handler (which never
                    // blocks) runs on the socket's event loop, not on its handler executor.
                    HomaSocket s = HomaSocket.open(HomaConfig.builder().bindAddress(new InetSocketAddress(NettyIo.HOST, 0))
                            .inlineExecution(transport.equals("homa-inline")).build());
                    sockets.add(s);
                    members.add(new InetSocketAddress(NettyIo.HOST, s.localAddress().getPort()));
                }
                for (int r = 0; r < n; r++) {
                    groups.add(CollectiveGroup.overHoma(sockets.get(r), members, r, options));
                }
            } else if (transport.equals("tcp")) {
                for (int i = 0; i < n; i++) {
                    members.add(new InetSocketAddress(NettyIo.HOST, freePort()));
                }
                for (int r = 0; r < n; r++) {
                    groups.add(CollectiveGroup.overTcp(members, r, options));
                }
            } else {
                throw new IllegalArgumentException("--transports takes homa, homa-inline and tcp, not " + transport);
            }
            long warmEnd = System.nanoTime() + 2_000_000_000L;
            while (System.nanoTime() < warmEnd) {
                measure(groups, op, 1 << 10, 20, false);
                measure(groups, op, 256 << 10, 3, false);
            }
            out.printf(Locale.ROOT, "%n%s, %d ranks on loopback, %s%n", transport, n, op);
            out.printf(Locale.ROOT, "%10s %6s %10s %10s %10s %10s %9s %9s %6s%n", "size", "iters", "min us", "p50 us",
                    "p99 us", "max us", "algbw", "busbw", "check");
            List<Object> results = new ArrayList<>();
            for (long size : sizes) {
                int elements = (int) Math.max(1, size / 4);
                int iters = (int) Math.max(5, Math.min(100, (64L << 20) / Math.max(1, size)));
                measure(groups, op, elements, Math.max(2, iters / 10), false);
                long[] t = measure(groups, op, elements, iters, true);
                Arrays.sort(t);
                double p50 = t[t.length / 2] / 1e3;
                double p99 = t[Math.min(t.length - 1, (int) Math.ceil(t.length * 0.99) - 1)] / 1e3;
                long bytes = elements * 4L;
                double algbw = bytes / (p50 * 1e3); // GB/s (bytes per ns)
                double busbw = algbw * CollectiveCommand.busFactor(op, n);
                out.printf(Locale.ROOT, "%10s %6d %10.1f %10.1f %10.1f %10.1f %7.3fGB/s %6.3fGB/s %6s%n",
                        CollectiveCommand.size(bytes), iters, t[0] / 1e3, p50, p99, t[t.length - 1] / 1e3, algbw, busbw, "ok");
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("transport", transport);
                m.put("ranks", n);
                m.put("op", op);
                m.put("bytes", bytes);
                m.put("elements", elements);
                m.put("type", "float");
                m.put("iterations", iters);
                m.put("time_min_us", t[0] / 1e3);
                m.put("time_p50_us", p50);
                m.put("time_p99_us", p99);
                m.put("time_max_us", t[t.length - 1] / 1e3);
                m.put("algbw_gbytes_per_s", algbw);
                m.put("busbw_gbytes_per_s", busbw);
                m.put("checked", true);
                results.add(m);
            }
            return results;
        } finally {
            groups.forEach(CollectiveGroup::close);
            sockets.forEach(HomaSocket::close);
        }
    }

    /** Runs {@code iters} iterations on every rank; returns each iteration's time (the slowest rank's), in ns. */
    private static long[] measure(List<CollectiveGroup> groups, String op, int elements, int iters, boolean check) {
        int n = groups.size();
        long[][] times = new long[n][iters];
        CyclicBarrier start = new CyclicBarrier(n);
        List<CompletableFuture<Void>> ranks = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int rank = r;
            CollectiveGroup g = groups.get(r);
            ranks.add(CompletableFuture.runAsync(() -> {
                Data d = new Data(op, n, rank, elements);
                try {
                    for (int i = 0; i < iters; i++) {
                        d.fill();
                        start.await();
                        long t0 = System.nanoTime();
                        d.run(g).join();
                        times[rank][i] = System.nanoTime() - t0;
                        d.check(); // every iteration, outside the timing
                    }
                } catch (Exception e) {
                    start.reset();
                    throw new IllegalStateException("rank " + rank + ": " + e, e);
                }
            }, runnable -> {
                Thread th = new Thread(runnable, "rank-" + rank);
                th.setDaemon(true);
                th.start();
            }));
        }
        CompletableFuture.allOf(ranks.toArray(new CompletableFuture[0])).join();
        long[] out = new long[iters];
        for (int i = 0; i < iters; i++) {
            for (int r = 0; r < n; r++) {
                out[i] = Math.max(out[i], times[r][i]);
            }
        }
        return out;
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One rank's data for an operation, its known result, and the check. */
    private static final class Data {
        final String op;
        final int n;
        final int rank;
        final int elements;
        final float[] a;
        final float[] b;

        Data(String op, int n, int rank, int elements) {
            this.op = op;
            this.n = n;
            this.rank = rank;
            this.elements = elements;
            int block = io.homa.collective.internal.Schedules.blockLength(elements, n, rank);
            switch (op) {
                case "allgather" -> { a = new float[block]; b = new float[elements]; }
                case "reducescatter" -> { a = new float[elements]; b = new float[block]; }
                default -> { a = new float[elements]; b = null; }
            }
        }

        static float value(int rank, int i) {
            return (rank + 1) * ((i % 13) + 1);
        }

        void fill() {
            switch (op) {
                case "allgather" -> {
                    int from = io.homa.collective.internal.Schedules.blockOffset(elements, n, rank);
                    for (int i = 0; i < a.length; i++) {
                        a[i] = value(0, from + i);
                    }
                    Arrays.fill(b, -1f);
                }
                case "broadcast" -> {
                    for (int i = 0; i < a.length; i++) {
                        a[i] = rank == 0 ? value(0, i) : -1f;
                    }
                }
                default -> {
                    for (int i = 0; i < a.length; i++) {
                        a[i] = value(rank, i);
                    }
                }
            }
        }

        CompletableFuture<Void> run(CollectiveGroup g) {
            return switch (op) {
                case "allgather" -> g.allGather(CollectiveBuffer.of(a), CollectiveBuffer.of(b));
                case "reducescatter" -> g.reduceScatter(CollectiveBuffer.of(a), CollectiveBuffer.of(b), ReduceOp.SUM);
                case "broadcast" -> g.broadcast(CollectiveBuffer.of(a), 0);
                default -> g.allReduce(a, ReduceOp.SUM);
            };
        }

        void check() {
            float ranksSum = n * (n + 1) / 2f;
            switch (op) {
                case "allgather" -> {
                    for (int i = 0; i < b.length; i++) {
                        expect(value(0, i), b[i], i);
                    }
                }
                case "reducescatter" -> {
                    int from = io.homa.collective.internal.Schedules.blockOffset(elements, n, rank);
                    for (int i = 0; i < b.length; i++) {
                        expect(ranksSum * value(0, from + i), b[i], from + i);
                    }
                }
                case "broadcast" -> {
                    for (int i = 0; i < a.length; i++) {
                        expect(value(0, i), a[i], i);
                    }
                }
                default -> {
                    for (int i = 0; i < a.length; i++) {
                        expect(ranksSum * value(0, i), a[i], i);
                    }
                }
            }
        }

        private void expect(float want, float got, int i) {
            if (want != got) {
                throw new IllegalStateException(op + " of " + elements + " floats: rank " + rank + " element " + i
                        + " is " + got + ", not " + want);
            }
        }
    }
}
