package io.homa.bench;

import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * What an interval cost the whole process: CPU time of all its threads (the JVM's
 * {@code getProcessCpuTime}: application, Netty event loops, JIT and GC alike) and bytes allocated
 * on the heap by all Java threads. Client and server of a benchmark share the process, so both
 * sides' costs are in it.
 *
 * <p>Allocation: on a JDK that counts the allocations of threads that have ended
 * ({@code getTotalThreadAllocatedBytes}, JDK 21+), that counter; otherwise the sum of every live
 * thread's {@code getThreadAllocatedBytes}, sampled every {@link #SAMPLE_MILLIS} ms as well as at
 * both ends, so that a thread that ends inside the interval still counts up to its last sample.
 */
public final class CostMeter {
    /** How often live threads are sampled when the JDK has no total counter. */
    static final long SAMPLE_MILLIS = 100;

    private static final java.lang.management.OperatingSystemMXBean OS = ManagementFactory.getOperatingSystemMXBean();
    private static final java.lang.management.ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final java.lang.management.CompilationMXBean JIT = ManagementFactory.getCompilationMXBean();
    private static final Method TOTAL_ALLOCATED = totalAllocatedMethod();

    /**
     * The cost of one interval: CPU nanoseconds (-1 unknown), allocated bytes (-1 unknown), and the
     * JIT's compilation time in it (milliseconds summed over the compiler threads, -1 unknown). The
     * CPU counts the compiler threads too; the compilation time says how much of it may be the JIT
     * still at work rather than the transport (a wall-clock figure: an upper bound on their CPU).
     */
    public record Cost(long cpuNanos, long allocatedBytes, long wallNanos, long compileMillis) {
        /** CPU microseconds per call, NaN if unknown or no call. */
        public double cpuMicrosPer(long calls) {
            return cpuNanos < 0 || calls <= 0 ? Double.NaN : cpuNanos / 1e3 / calls;
        }

        /** Bytes allocated per call, NaN if unknown or no call. */
        public double bytesPer(long calls) {
            return allocatedBytes < 0 || calls <= 0 ? Double.NaN : (double) allocatedBytes / calls;
        }

        /** CPU time over wall time: how many cores were busy on average. */
        public double coresBusy() {
            return cpuNanos < 0 || wallNanos <= 0 ? Double.NaN : (double) cpuNanos / wallNanos;
        }
    }

    private final long startCpu;
    private final long startCompile;
    private final long startWall;
    private final long startTotal;
    /** Per-thread allocation when started and as last sampled (the fallback). */
    private final Map<Long, Long> startByThread;
    private final Map<Long, Long> lastByThread;
    private final ScheduledExecutorService sampler;
    private final ScheduledFuture<?> sampling;

    private CostMeter() {
        startWall = System.nanoTime();
        startCpu = processCpuNanos();
        startCompile = compileMillis();
        if (TOTAL_ALLOCATED != null) {
            startTotal = totalAllocated();
            startByThread = null;
            lastByThread = null;
            sampler = null;
            sampling = null;
        } else {
            startTotal = -1;
            startByThread = perThread();
            lastByThread = new HashMap<>(startByThread);
            if (startByThread.isEmpty()) {
                sampler = null;
                sampling = null;
            } else {
                ScheduledThreadPoolExecutor s = new ScheduledThreadPoolExecutor(1, r -> {
                    Thread t = new Thread(r, "cost-meter");
                    t.setDaemon(true);
                    return t;
                });
                sampler = s;
                sampling = s.scheduleAtFixedRate(this::sample, SAMPLE_MILLIS, SAMPLE_MILLIS, TimeUnit.MILLISECONDS);
            }
        }
    }

    /** Starts measuring now. */
    public static CostMeter start() {
        return new CostMeter();
    }

    /** Whether bytes allocated can be measured on this JVM. */
    public static boolean allocationSupported() {
        return THREADS instanceof com.sun.management.ThreadMXBean t && t.isThreadAllocatedMemorySupported()
                && t.isThreadAllocatedMemoryEnabled();
    }

    /** Ends the interval and returns what it cost. */
    public Cost stop() {
        long cpu = processCpuNanos();
        long compile = compileMillis();
        long wall = System.nanoTime() - startWall;
        long allocated;
        if (startTotal >= 0) {
            long end = totalAllocated();
            allocated = end < 0 ? -1 : end - startTotal;
        } else if (startByThread == null || startByThread.isEmpty()) {
            allocated = -1;
        } else {
            sampling.cancel(false);
            sampler.shutdown();
            try {
                sampler.awaitTermination(1, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            sample();
            allocated = 0;
            synchronized (lastByThread) {
                for (Map.Entry<Long, Long> e : lastByThread.entrySet()) {
                    allocated += e.getValue() - startByThread.getOrDefault(e.getKey(), 0L);
                }
            }
        }
        return new Cost(cpu < 0 || startCpu < 0 ? -1 : cpu - startCpu, allocated, wall,
                compile < 0 || startCompile < 0 ? -1 : compile - startCompile);
    }

    /** The JVM's accumulated compilation time, ms (-1 where it is not monitored). */
    private static long compileMillis() {
        return JIT != null && JIT.isCompilationTimeMonitoringSupported() ? JIT.getTotalCompilationTime() : -1;
    }

    private void sample() {
        Map<Long, Long> now = perThread();
        synchronized (lastByThread) {
            lastByThread.putAll(now);
        }
    }

    private static Map<Long, Long> perThread() {
        Map<Long, Long> out = new HashMap<>();
        if (!allocationSupported()) {
            return out;
        }
        com.sun.management.ThreadMXBean t = (com.sun.management.ThreadMXBean) THREADS;
        long[] ids = t.getAllThreadIds();
        long[] bytes = t.getThreadAllocatedBytes(ids);
        for (int i = 0; i < ids.length; i++) {
            if (bytes[i] >= 0) { // -1: the thread ended between the two calls
                out.put(ids[i], bytes[i]);
            }
        }
        return out;
    }

    private static long processCpuNanos() {
        if (OS instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }

    private static Method totalAllocatedMethod() {
        if (!allocationSupported()) {
            return null;
        }
        try {
            return com.sun.management.ThreadMXBean.class.getMethod("getTotalThreadAllocatedBytes");
        } catch (NoSuchMethodException e) {
            return null; // before JDK 21
        }
    }

    private static long totalAllocated() {
        try {
            return (Long) TOTAL_ALLOCATED.invoke(THREADS);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return -1;
        }
    }

    /** Which allocation counter this JVM gives (for results.json). */
    public static String allocationCounter() {
        if (TOTAL_ALLOCATED != null) {
            return "getTotalThreadAllocatedBytes";
        }
        return allocationSupported() ? "getThreadAllocatedBytes summed over live threads, sampled every "
                + SAMPLE_MILLIS + " ms" : "unsupported";
    }
}
