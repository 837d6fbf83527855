package io.homa.bench.jmh;

import io.homa.bench.BackgroundLoad;
import io.homa.bench.EchoClient;
import io.homa.bench.Scenario;
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

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Short messages under load: 100 B calls, one at a time, while background threads keep 1 MB calls
 * in flight to the same server.
 *
 * <ul>
 * <li>{@code background=shared}: two background threads call through the probe's own client (one
 *     connection for tcp-single, one socket for Homa, one pool for tcp-pool): head-of-line
 *     blocking shows where the transport has it.</li>
 * <li>{@code background=4-clients}: four other clients, one 1 MB call in flight each; the probe's
 *     client carries only the probe. Only the server and the host are shared.</li>
 * </ul>
 * The load stops at the end of the trial (and by itself after an hour or 10 million calls).
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class LoadedLatencyBenchmark {

    @State(Scope.Benchmark)
    public static class Loaded extends EchoState {
        @Param({"homa", "tcp-single", "tcp-pool"})
        public String transport;

        @Param({"shared", "4-clients"})
        public String background;

        BackgroundLoad load;

        @Setup(Level.Trial)
        public void setUp() throws InterruptedException {
            open(transport, 100);
            List<EchoClient> clients = new ArrayList<>();
            int threadsPerClient;
            switch (background) {
                case "shared" -> {
                    clients.add(pair.client());
                    threadsPerClient = 2;
                }
                case "4-clients" -> {
                    for (int i = 0; i < 4; i++) {
                        clients.add(pair.newClient());
                    }
                    threadsPerClient = 1;
                }
                default -> throw new IllegalArgumentException("background must be shared or 4-clients: " + background);
            }
            load = new BackgroundLoad(clients, threadsPerClient, Scenario.BACKGROUND_SIZE, 10_000_000,
                    Duration.ofHours(1), Duration.ofSeconds(CALL_TIMEOUT_SECONDS));
            if (!load.awaitFlowing(Duration.ofSeconds(CALL_TIMEOUT_SECONDS))) {
                throw new IllegalStateException("background load did not start: " + load.error());
            }
        }

        /** A measurement without its load would be a lie: fail instead. */
        @TearDown(Level.Iteration)
        public void checkLoad() {
            if (load.error() != null || load.exhausted()) {
                throw new IllegalStateException("background load stopped: " + load.error());
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            if (load != null) {
                load.close();
            }
            close();
        }
    }

    @Benchmark
    public byte[] echo100B(Loaded s) throws Exception {
        return s.echo();
    }
}
