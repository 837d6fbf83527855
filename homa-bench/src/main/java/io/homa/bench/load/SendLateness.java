package io.homa.bench.load;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Why an open-loop send left late, counted apart by cause. Latency counts from the scheduled send
 * time, so every kind of lateness is in the measured RTTs; only some of it is the network's.
 *
 * <ul>
 *   <li><b>CPU</b>: the load generator's thread reached the transport after the send's scheduled
 *       time because it was not running (a starved CPU, a GC pause, the JIT). This is the
 *       machine, not the protocol; a run with much of it measures the CPU.</li>
 *   <li><b>In call</b>: the generator was late because the previous {@code call()} had not yet
 *       returned (a transport that blocks its caller), less the JVM's GC pauses during that call
 *       (those stop every thread: they are the machine's, counted as CPU). Neither transport
 *       blocks by design; it is counted so that it cannot hide in the CPU figure.</li>
 *   <li><b>I/O thread</b> (TCP): the transport's event loop took the request up late (busy with
 *       other calls, or starved as well).</li>
 *   <li><b>Held by the transport</b> (TCP): after the event loop took the request up, its first
 *       byte waited for the kernel behind earlier requests' bytes on the same connection, i.e.
 *       behind a full socket send buffer (backpressure). That is a legitimate part of TCP's
 *       latency.</li>
 * </ul>
 * Homa's own queues (its SRPT sender queue and pacer, inside the engine) are not observable
 * through the public API per call; they are part of its RTT as TCP's send buffer is of TCP's, and
 * calls held for a free slot are counted by the socket ({@code shell.CALLS_QUEUED}).
 *
 * <p>The generator side is called from the generator's thread, the transport side from I/O
 * threads; all counters are atomic.
 */
final class SendLateness {
    /** A send is late when it left more than this after its scheduled time. */
    static final long LATE_NANOS = 1_000_000L;
    /** A run is invalid (it measured the CPU, not the network) above this fraction of CPU-late sends. */
    static final double CPU_LATE_LIMIT = 0.01;

    private static final List<GarbageCollectorMXBean> GC_BEANS = ManagementFactory.getGarbageCollectorMXBeans();

    private final AtomicLong sends = new AtomicLong();
    private final AtomicLong late = new AtomicLong();
    private final AtomicLong cpuLate = new AtomicLong();
    private final AtomicLong inCallLate = new AtomicLong();
    private final AtomicLong observed = new AtomicLong();
    private final AtomicLong ioThreadLate = new AtomicLong();
    private final AtomicLong heldLate = new AtomicLong();
    private final AtomicLong maxLagNanos = new AtomicLong();
    private final AtomicLong maxCpuNanos = new AtomicLong();
    private final AtomicLong maxHeldNanos = new AtomicLong();
    // Why the CPU-late sends were late (the generator's thread only: plain fields).
    private long lateWaitingForCpu;
    private long lateInGc;
    private long lateWokenLate;
    private long lateInBacklog;
    private long lateRunQueueNanos;
    private long lateGcNanos;
    private long lateWokenLateNanos;
    private boolean unknownRunQueue;
    /** The cause of the last send that woke late: the sends of the backlog after it share it. */
    private Cause lastCause = Cause.WOKEN_LATE;

    /** Why a send left more than 1 ms late for want of CPU, by the largest part of its lag. */
    enum Cause {
        /** Runnable, the generator's thread waited on a run queue: the other threads had the cores. */
        WAITING_FOR_CPU,
        /** The JVM was stopped for a garbage collection. */
        GC,
        /** Neither: the thread's timer fired late, or the JVM held it (a safepoint), or the VM's vCPU was not running. */
        WOKEN_LATE
    }

    /**
     * One measured send, seen by the generator: it was due at {@code scheduled} and the generator
     * called the transport at {@code callStart}; its previous {@code call()} ran from
     * {@code previousStart} to {@code previousReturn}, and the JVM paused for GC
     * {@code previousCallPauseNanos} during it. The part of the lateness spent inside that
     * previous call (where it overlaps this send's wait), pauses excepted, is the transport's;
     * the rest is the generator waiting for a CPU or for the JVM. After a stall the generator
     * sends its backlog at once: those sends are late because of the stall, not of the short
     * calls before them, which is why only the overlap counts.
     */
    void generator(long scheduled, long callStart, long previousStart, long previousReturn, long previousCallPauseNanos) {
        sends.incrementAndGet();
        long lag = Math.max(0, callStart - scheduled);
        long overlap = Math.min(previousReturn, callStart) - Math.max(previousStart, scheduled);
        long inCall = Math.min(lag, Math.max(0, overlap - previousCallPauseNanos));
        long cpu = lag - inCall;
        if (lag > LATE_NANOS) {
            late.incrementAndGet();
        }
        if (cpu > LATE_NANOS) {
            cpuLate.incrementAndGet();
        }
        if (inCall > LATE_NANOS) {
            inCallLate.incrementAndGet();
        }
        maxLagNanos.accumulateAndGet(lag, Math::max);
        maxCpuNanos.accumulateAndGet(cpu, Math::max);
    }

    /**
     * Why one measured send left late, from the generator thread's account of the wait before it:
     * {@code parked} when the generator waited for its time (else it was behind and sent at once,
     * late for the same reason as the send before it), {@code runQueueNanos} the time its thread
     * spent runnable on a run queue in that wait (-1 unknown), {@code gcNanos} the GC's pauses in it.
     * Only sends more than 1 ms late (counted by {@link #generator}) are attributed.
     */
    void cause(long scheduled, long callStart, boolean parked, long runQueueNanos, long gcNanos) {
        long lag = callStart - scheduled;
        if (lag <= LATE_NANOS) {
            return;
        }
        if (!parked) {
            lateInBacklog++;
            count(lastCause);
            return;
        }
        if (runQueueNanos < 0) {
            unknownRunQueue = true;
        }
        long rq = Math.min(lag, Math.max(0, runQueueNanos));
        long gc = Math.min(lag - rq, Math.max(0, gcNanos));
        long rest = lag - rq - gc;
        lateRunQueueNanos += rq;
        lateGcNanos += gc;
        lateWokenLateNanos += rest;
        lastCause = rq >= gc && rq >= rest ? Cause.WAITING_FOR_CPU : gc >= rest ? Cause.GC : Cause.WOKEN_LATE;
        count(lastCause);
    }

    private void count(Cause c) {
        switch (c) {
            case WAITING_FOR_CPU -> lateWaitingForCpu++;
            case GC -> lateInGc++;
            case WOKEN_LATE -> lateWokenLate++;
        }
    }

    /**
     * One measured send, seen by the transport: called at {@code callStart}, taken up by its I/O
     * thread at {@code ioStart}, its first byte able to enter the kernel at {@code started}.
     */
    void transport(long callStart, long ioStart, long started) {
        observed.incrementAndGet();
        if (ioStart - callStart > LATE_NANOS) {
            ioThreadLate.incrementAndGet();
        }
        long held = Math.max(0, started - ioStart);
        if (held > LATE_NANOS) {
            heldLate.incrementAndGet();
        }
        maxHeldNanos.accumulateAndGet(held, Math::max);
    }

    long sends() {
        return sends.get();
    }

    long cpuLate() {
        return cpuLate.get();
    }

    /** The JVM's total GC time so far, ms (all collectors; pauses of the serial collector). */
    static long gcMillis() {
        long total = 0;
        for (GarbageCollectorMXBean b : GC_BEANS) {
            total += Math.max(0, b.getCollectionTime());
        }
        return total;
    }

    /** The fraction of sends more than 1 ms late for want of a CPU (0 with no sends). */
    double cpuLateFraction() {
        long n = sends.get();
        return n == 0 ? 0 : (double) cpuLate.get() / n;
    }

    /** Whether the run measured the network: CPU-late sends within {@link #CPU_LATE_LIMIT}. */
    static boolean valid(double cpuLateFraction) {
        return cpuLateFraction <= CPU_LATE_LIMIT;
    }

    /** The counters for a node's summary (keys stable: the report sums them over nodes). */
    Map<String, Object> json() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("sendsLateOver1ms", late.get());
        m.put("sendsCpuLateOver1ms", cpuLate.get());
        m.put("sendsInCallLateOver1ms", inCallLate.get());
        m.put("sendsObservedInTransport", observed.get());
        m.put("sendsIoThreadLateOver1ms", ioThreadLate.get());
        m.put("sendsHeldByTransportOver1ms", heldLate.get());
        m.put("cpuLateFraction", cpuLateFraction());
        m.put("maxSendLagUs", maxLagNanos.get() / 1000.0);
        m.put("maxCpuLagUs", maxCpuNanos.get() / 1000.0);
        m.put("maxHeldByTransportUs", maxHeldNanos.get() / 1000.0);
        // Sends more than 1 ms late (any part), by the largest part of the wait before them.
        m.put("lateCauseKnown", !unknownRunQueue);
        m.put("lateWaitingForCpu", lateWaitingForCpu);
        m.put("lateInGc", lateInGc);
        m.put("lateWokenLate", lateWokenLate);
        m.put("lateInBacklogOfThese", lateInBacklog);
        m.put("lateRunQueueMs", lateRunQueueNanos / 1e6);
        m.put("lateGcMs", lateGcNanos / 1e6);
        m.put("lateWokenLateMs", lateWokenLateNanos / 1e6);
        return m;
    }
}
