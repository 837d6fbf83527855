package io.homa.bench.jmh;

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

import java.util.concurrent.TimeUnit;

/**
 * Unloaded echo latency: one caller, one call at a time (closed loop), percentiles from
 * {@code Mode.SampleTime}. {@code echo} covers the stream transports at every size;
 * {@code echoUdpRaw} covers raw UDP, which carries only sizes up to 1,400 bytes (so the other sizes
 * do not exist for it rather than failing).
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class UnloadedLatencyBenchmark {

    @State(Scope.Benchmark)
    public static class Streams extends EchoState {
        @Param({"homa", "tcp-single", "tcp-pool"})
        public String transport;

        @Param({"100", "1000", "10000", "100000", "1000000"})
        public int size;

        @Setup(Level.Trial)
        public void setUp() {
            open(transport, size);
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            close();
        }
    }

    @State(Scope.Benchmark)
    public static class Datagrams extends EchoState {
        @Param({"udp-raw"})
        public String transport;

        @Param({"100", "1000"})
        public int size;

        @Setup(Level.Trial)
        public void setUp() {
            open(transport, size);
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            close();
        }
    }

    @Benchmark
    public byte[] echo(Streams s) throws Exception {
        return s.echo();
    }

    @Benchmark
    public byte[] echoUdpRaw(Datagrams s) throws Exception {
        return s.echo();
    }
}
