package io.homa.bench;

import io.homa.HomaConfig;
import io.homa.HomaMetrics;
import io.homa.HomaSocket;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;

/**
 * A fixed number of 100 B calls, one at a time from this thread, to a server socket in the same
 * JVM (inline execution on both), for counting system calls and context switches per call under
 * {@code perf stat} (docs/benchmarks.md, "The latency floor"): 3 rounds of 20,000 calls, each
 * round's p50 and p99, and the client's caller-turn counters at the end. Not a benchmark of
 * record (one process, no JIT rule); compare's figures are.
 *
 * <pre>
 * perf stat -e context-switches,syscalls:sys_enter_futex,... \
 *     java -cp homa-bench/target/homa-bench.jar io.homa.bench.WakeupProbe SPIN_MICROS busy|idle send|nosend [chain]
 * </pre>
 *
 * <p>With {@code chain}, each call is made on the client's event loop by the completion stage of
 * the one before (inline execution), nobody waits in {@code get()}: the caller is the loop, and a
 * call's latency is the time from its start to its completion.
 */
public final class WakeupProbe {
    private static final int ROUNDS = 3;
    private static final int CALLS = 20_000;

    private WakeupProbe() {
    }

    /** {@code nanos.length} calls, each started by the completion stage of the one before (on the client's loop). */
    private static void chained(HomaSocket c, java.net.InetSocketAddress to, byte[] request, long[] nanos) throws Exception {
        java.util.concurrent.CompletableFuture<Void> done = new java.util.concurrent.CompletableFuture<>();
        Runnable[] next = new Runnable[1];
        int[] i = {0};
        next[0] = () -> {
            long t0 = System.nanoTime();
            c.call(to, request).whenComplete((reply, error) -> {
                nanos[i[0]] = System.nanoTime() - t0;
                if (error != null) {
                    done.completeExceptionally(error);
                } else if (++i[0] == nanos.length) {
                    done.complete(null);
                } else {
                    next[0].run();
                }
            });
        };
        next[0].run();
        done.get(5, java.util.concurrent.TimeUnit.MINUTES);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3 && !(args.length == 4 && args[3].equals("chain"))) {
            System.err.println("usage: WakeupProbe SPIN_MICROS busy|idle send|nosend [chain]");
            System.exit(2);
        }
        boolean chain = args.length == 4;
        long spinMicros = Long.parseLong(args[0]);
        boolean busy = args[1].equals("busy");
        boolean sends = args[2].equals("send");
        HomaConfig.Builder b = HomaConfig.builder().bindAddress(new InetSocketAddress("127.0.0.1", 0))
                .inlineExecution(true).busyPoll(busy).callerSends(sends);
        HomaConfig server = b.build();
        HomaConfig client = b.callerSpin(Duration.ofNanos(spinMicros * 1000)).build();
        try (HomaSocket s = HomaSocket.open(server); HomaSocket c = HomaSocket.open(client)) {
            s.serve(r -> r.reply(r.payload()));
            byte[] request = new byte[100];
            for (int round = 0; round < ROUNDS; round++) {
                long[] nanos = new long[CALLS];
                if (chain) {
                    chained(c, s.localAddress(), request, nanos);
                } else {
                    for (int i = 0; i < CALLS; i++) {
                        long t0 = System.nanoTime();
                        c.call(s.localAddress(), request).get();
                        nanos[i] = System.nanoTime() - t0;
                    }
                }
                Arrays.sort(nanos);
                System.out.printf("round %d: p50 %.1f us, p99 %.1f us%n", round + 1, nanos[CALLS / 2] / 1e3,
                        nanos[CALLS * 99 / 100] / 1e3);
            }
            HomaMetrics m = c.metrics();
            System.out.printf("%d calls: %d caller turns, %d caller reads, %d loop hand-offs%n", ROUNDS * CALLS,
                    m.shell(HomaMetrics.Shell.CALLER_TURNS), m.shell(HomaMetrics.Shell.CALLER_READS),
                    m.shell(HomaMetrics.Shell.LOOP_HANDOFFS));
        }
    }
}
