package io.homa.bench.jmh;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Throughput with a window of calls kept outstanding (each operation issues one call once a slot
 * is free; a slot frees when a reply arrives, so in steady state issues = completions).
 *
 * <ul>
 * <li>{@code calls1MB}: 1 MB calls, 4 outstanding. The score is calls/s; the {@code mbit}
 *     secondary counter is the request payload carried in Mbit/s (1 MB = 8 Mbit; the replies carry
 *     as much back): divide by 1,000 for Gbit/s.</li>
 * <li>{@code calls100B}: 100 B calls, 64 outstanding: calls/s.</li>
 * </ul>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ThroughputBenchmark {

    /** A window of outstanding calls; the iteration's teardown waits for the last replies. */
    public abstract static class Window extends EchoState {
        private Semaphore slots;
        private int windowSize;
        private final AtomicReference<Throwable> failure = new AtomicReference<>();

        void open(String transport, int size, int outstanding) {
            open(transport, size);
            this.windowSize = outstanding;
            this.slots = new Semaphore(outstanding);
        }

        void issue() throws Exception {
            if (!slots.tryAcquire(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                throw new TimeoutException("no reply within " + CALL_TIMEOUT_SECONDS + " s with " + windowSize + " outstanding");
            }
            pair.client().call(request).whenComplete((reply, error) -> {
                if (error != null) {
                    failure.compareAndSet(null, error);
                } else if (reply.length != request.length) {
                    failure.compareAndSet(null, new IllegalStateException("bad echo length " + reply.length));
                }
                slots.release();
            });
        }

        @TearDown(Level.Iteration)
        public void drain() throws Exception {
            if (!slots.tryAcquire(windowSize, 30, TimeUnit.SECONDS)) {
                throw new TimeoutException("outstanding calls did not complete within 30 s");
            }
            slots.release(windowSize);
            Throwable t = failure.get();
            if (t != null) {
                throw new IllegalStateException("a call failed", t);
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            close();
        }
    }

    @State(Scope.Benchmark)
    public static class Big extends Window {
        @Param({"homa", "tcp-single", "tcp-pool"})
        public String transport;

        @Param({"4"})
        public int outstanding;

        @Setup(Level.Trial)
        public void setUp() {
            open(transport, 1_000_000, outstanding);
        }
    }

    @State(Scope.Benchmark)
    public static class Small extends Window {
        @Param({"homa", "tcp-single", "tcp-pool", "udp-raw"})
        public String transport;

        @Param({"64"})
        public int outstanding;

        @Setup(Level.Trial)
        public void setUp() {
            open(transport, 100, outstanding);
        }
    }

    /** Request payload carried, in megabits (reported per second: Mbit/s). */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Payload {
        public long mbit;

        @Setup(Level.Iteration)
        public void reset() {
            mbit = 0;
        }
    }

    @Benchmark
    public void calls1MB(Big s, Payload p) throws Exception {
        s.issue();
        p.mbit += 8;
    }

    @Benchmark
    public void calls100B(Small s) throws Exception {
        s.issue();
    }
}
