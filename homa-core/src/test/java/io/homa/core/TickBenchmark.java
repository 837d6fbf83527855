package io.homa.core;

import io.homa.core.wire.PacketEncoder;
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
import org.openjdk.jmh.annotations.Warmup;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * The cost of one timer tick ({@code HomaEngine.onTimer} when a tick is due, plus sending what it
 * queued) with many live RPCs that need nothing: {@code server}, requests the application is
 * working on (SERVER_PROCESSING); {@code client}, requests sent and waiting for their responses
 * (they ask for them now and then, rationed to one RESEND per peer and tick). The RPCs are spread
 * over {@code peers} peers and never time out ({@code timeoutTicks} is huge), so every tick of a
 * measurement sees the same state. With 100 peers, each peer has more RPCs waiting than its ration
 * serves before they ask again, so every RPC is due on every tick (the oldest of each peer gets the
 * RESEND); with 10,000 peers the ration keeps up, and an RPC is due only when its backoff ends.
 *
 * <p>Run with homa-core's {@code jmh} profile (docs/benchmarks.md): {@code mvn -B -pl homa-core -am
 * test -Pjmh -DskipTests -Djmh.args="TickBenchmark -f1 -wi 3 -i 5"}
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class TickBenchmark {
    @Param({"1000", "10000", "100000"})
    public int rpcs;

    @Param({"server", "client"})
    public String kind;

    @Param({"100", "10000"})
    public int peers;

    private final EngineConfig cfg = EngineConfig.builder().pacerEnabled(false).timeoutTicks(1 << 30).build();
    private final ByteBuffer tx = ByteBuffer.allocate(cfg.maxDatagram() * cfg.maxGsoSegments);
    private HomaEngine engine;
    private long now;

    @Setup(Level.Trial)
    public void setUp() {
        engine = new HomaEngine(cfg, 1);
        now = 1_000_000;
        ByteBuffer payload = ByteBuffer.allocate(100);
        ByteBuffer packet = ByteBuffer.allocate(cfg.maxDatagram());
        for (int i = 0; i < rpcs; i++) {
            InetSocketAddress peer = new InetSocketAddress("10.0." + (i % peers / 250) + "." + (i % peers % 250 + 1), 4000);
            if (kind.equals("client")) {
                engine.startRequest(now, peer, payload.duplicate());
            } else {
                packet.clear();
                PacketEncoder.data(packet, (i + 1L) << 1, 100, 100, 0, 0, false, 0, 0, payload, 0, 100);
                engine.onDatagram(now, peer, packet.flip());
            }
            drain();
        }
        while (engine.pollEvent() != null) {
            // the requests are the application's now; it never answers them
        }
        if (engine.liveRpcs() != rpcs) {
            throw new IllegalStateException("set-up made " + engine.describe());
        }
    }

    /** One tick: the clock reaches the next deadline, the timer runs, its packets are sent. */
    @Benchmark
    public int tick() {
        now += cfg.tickNanos; // exactly when the tick is due (the last one set it one tick later)
        engine.onTimer(now);
        return drain();
    }

    private int drain() {
        int n = 0;
        while (engine.pollTransmit(now, tx.clear()) != null) {
            n++;
        }
        return n;
    }
}
