package io.homa.bench.overload;

import io.homa.HomaConfig;
import io.homa.HomaMetrics;
import io.homa.HomaSocket;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The server JVM of {@link OverloadCommand}: one Homa socket with the default configuration but
 * its executor threads, and a handler that works for a fixed time (parked, as a handler waiting on
 * a slow dependency would be) and answers 8 bytes. Each request starts with its caller's deadline
 * as a {@link System#nanoTime()} value (client and server share the host's monotonic clock), so the
 * handler can tell whether it started for a caller who had already given up.
 *
 * <p>Lines on standard input: {@code STATS} answers one line of figures (with the JVM's time spent
 * compiling so far), {@code RESET} starts a new flood's late starts and idle time, {@code QUIT} ends it. The
 * first line out is {@code PORT <port>}.
 */
public final class OverloadServer {
    /** Every answer: the socket only reads a reply array, so one serves them all. */
    private static final byte[] REPLY = new byte[8];

    private OverloadServer() {
    }

    /** The JVM's time spent compiling so far (ms), or 0 where it is not told (an interpreter-only JVM). */
    static long compileMillis() {
        java.lang.management.CompilationMXBean jit = java.lang.management.ManagementFactory.getCompilationMXBean();
        return jit == null || !jit.isCompilationTimeMonitoringSupported() ? 0 : jit.getTotalCompilationTime();
    }

    /** {@code overload-server --bind HOST --port P --handler-ms MS --threads N} (port 0: any). */
    public static int run(String[] args, InputStream in, PrintStream out) throws IOException {
        String bind = "127.0.0.1";
        double handlerMs = 10;
        int threads = 2;
        int port = 0;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--bind" -> bind = args[i + 1];
                case "--handler-ms" -> handlerMs = Double.parseDouble(args[i + 1]);
                case "--threads" -> threads = Integer.parseInt(args[i + 1]);
                case "--port" -> port = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        long handlerNanos = (long) (handlerMs * 1e6);
        AtomicLong started = new AtomicLong();
        AtomicLong late = new AtomicLong();
        AtomicLong worstLateNanos = new AtomicLong();
        AtomicLong handlerNanosTotal = new AtomicLong();
        AtomicLong gapNanos = new AtomicLong();
        // When each handler thread last finished a handler: the idle time between two tells how
        // busy the threads were kept.
        ThreadLocal<long[]> lastEnd = ThreadLocal.withInitial(() -> new long[1]);
        HeapSampler heap = new HeapSampler();
        heap.start();
        HomaConfig config = HomaConfig.builder().bindAddress(new InetSocketAddress(bind, port)).executorThreads(threads)
                .build();
        try (HomaSocket socket = HomaSocket.open(config)) {
            socket.serve(r -> {
                long now = System.nanoTime();
                started.incrementAndGet();
                long[] le = lastEnd.get();
                if (le[0] != 0 && now - le[0] < 1_000_000_000L) {
                    gapNanos.addAndGet(now - le[0]); // the thread's time between two handlers
                }
                if (r.length() >= 8) {
                    io.netty.buffer.ByteBuf b = r.payload();
                    long callerDeadline;
                    try {
                        callerDeadline = b.getLong(b.readerIndex());
                    } finally {
                        b.release();
                    }
                    if (now - callerDeadline >= 0) {
                        late.incrementAndGet();
                        worstLateNanos.accumulateAndGet(now - callerDeadline, Math::max);
                    }
                }
                long until = now + handlerNanos;
                while (System.nanoTime() - until < 0) {
                    LockSupport.parkNanos(until - System.nanoTime()); // the slow dependency
                }
                r.reply(REPLY);
                handlerNanosTotal.addAndGet(System.nanoTime() - now);
                le[0] = System.nanoTime();
            });
            out.println("PORT " + socket.localAddress().getPort());
            out.flush();
            BufferedReader commands = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            for (String line; (line = commands.readLine()) != null; ) {
                if (line.equals("QUIT")) {
                    break;
                }
                if (line.equals("RESET")) { // a new flood: its late starts and idle time count from here
                    gapNanos.set(0);
                    late.set(0);
                    worstLateNanos.set(0);
                    out.println("OK");
                    out.flush();
                    continue;
                }
                if (line.equals("STATS")) {
                    HomaMetrics m = socket.metrics();
                    out.println("STATS started=" + started.get() + " late=" + late.get()
                            + " worstLateMs=" + worstLateNanos.get() / 1e6
                            + " idleBetweenHandlersMs=" + gapNanos.get() / 1e6
                            + " handlerMeanMs=" + (started.get() == 0 ? 0 : handlerNanosTotal.get() / 1e6 / started.get())
                            + " liveHeapMiB=" + heap.highWaterMiB()
                            + " shed=" + m.shell(HomaMetrics.Shell.REQUESTS_SHED)
                            + " expired=" + m.shell(HomaMetrics.Shell.REQUESTS_EXPIRED)
                            + " cancelled=" + m.shell(HomaMetrics.Shell.REQUESTS_CANCELLED)
                            + " overloaded=" + m.shell(HomaMetrics.Shell.REQUESTS_OVERLOADED)
                            + " skipped=" + m.shell(HomaMetrics.Shell.REQUESTS_SKIPPED)
                            + " replied=" + m.shell(HomaMetrics.Shell.REQUESTS_REPLIED)
                            + " queueP50us=" + m.queueDelayMicros(0.5) + " queueP99us=" + m.queueDelayMicros(0.99)
                            + " queued=" + m.queuedRequests()
                            + " sentRpcUnknown=" + (m.packetsSent("RPC_UNKNOWN") + m.packetsSent("RPC_UNKNOWN_SINCE"))
                            + " sentBusy=" + m.packetsSent("BUSY")
                            + " serverRpcsTimedOut=" + m.counter("SERVER_RPCS_TIMED_OUT")
                            + " serverRpcsAbandoned=" + m.counter("SERVER_RPCS_ABANDONED")
                            + " datagramsDropped=" + m.shell(HomaMetrics.Shell.DATAGRAMS_DROPPED)
                            + " drops=" + m.dropsByReason().toString().replace(" ", "")
                            + " compileMs=" + compileMillis());
                    out.flush();
                }
            }
        } finally {
            heap.finish();
        }
        return 0;
    }

    /** The heap's live set: the most used after a collection, over the heap pools, sampled every 50 ms. */
    private static final class HeapSampler extends Thread {
        private volatile boolean running = true;
        private volatile long highWater;

        HeapSampler() {
            super("heap-sampler");
            setDaemon(true);
        }

        @Override
        public void run() {
            while (running) {
                long used = 0;
                for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
                    MemoryUsage u = p.getType() == MemoryType.HEAP ? p.getCollectionUsage() : null;
                    if (u != null) {
                        used += u.getUsed();
                    }
                }
                highWater = Math.max(highWater, used);
                LockSupport.parkNanos(50_000_000);
            }
        }

        void finish() {
            running = false;
        }

        double highWaterMiB() {
            return Math.round(highWater / 1048576.0 * 10) / 10.0;
        }
    }
}
