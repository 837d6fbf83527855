package io.homa.core;

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
import org.openjdk.jmh.infra.Blackhole;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * The engine's two schedulers on their hot paths, without sockets: the receiver's grant scheduler
 * (a segment arrives for one of N incoming messages, then {@code schedule}) and the sender's SRPT
 * queue (send one segment from the head). It lives in package io.homa.core because both classes
 * are package-private, and in homa-core's test tree so that no other jar splits the package.
 * Target: zero allocation per operation ({@code -prof gc}).
 *
 * <p>Run with homa-core's {@code jmh} profile (docs/benchmarks.md): {@code mvn -B -pl homa-core -am
 * test -Pjmh -DskipTests -Djmh.args="SchedulerBenchmark -f1 -wi 2 -i 3 -prof gc"}
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class SchedulerBenchmark {
    /** Long messages, so that one rarely finishes (and is replaced) during a measurement. */
    private static final int LENGTH = 1 << 30;

    @Param({"8", "64"})
    public int messages;

    private final EngineConfig cfg = EngineConfig.defaults();
    private final int segment = cfg.segmentPayload();
    private GrantScheduler grants;
    private IncomingMessage[] incoming;
    private SenderQueue senders;
    private long seq;
    private int next;
    private final GrantScheduler.Sink sink = (m, offset, priority) -> { };
    private static final int PAYLOAD = 1 << 20;
    private final ByteBuffer payload = ByteBuffer.allocate(PAYLOAD);

    @Setup(Level.Iteration)
    public void setUp() {
        grants = new GrantScheduler(cfg);
        incoming = new IncomingMessage[messages];
        senders = new SenderQueue(false);
        for (int i = 0; i < messages; i++) {
            incoming[i] = newIncoming(i);
            OutgoingMessage out = newOutgoing(i);
            senders.offer(out);
        }
    }

    private Peer peer(int i) {
        return new Peer(new InetSocketAddress("127.0.0.1", 1000 + i % 16));
    }

    private IncomingMessage newIncoming(int i) {
        IncomingMessage m = new IncomingMessage(new Rpc(2L * (i + 1), peer(i), false), LENGTH, seq++);
        m.granted = cfg.unscheduledLimit();
        grants.track(m);
        grants.add(m);
        return m;
    }

    private OutgoingMessage newOutgoing(int i) {
        Rpc rpc = new Rpc(2L * (i + 1), peer(i), true);
        // Views of one shared buffer: the queue never reads payload bytes. Lengths differ so that
        // the SRPT order means something.
        OutgoingMessage m = new OutgoingMessage(rpc, payload.duplicate().limit(PAYLOAD - i * 1024), seq++, 0);
        m.granted = m.length;
        rpc.out = m;
        return m;
    }

    /** One segment arrives for the next message (round robin), then the scheduler runs. */
    @Benchmark
    public long grantScheduleAfterSegment() {
        IncomingMessage m = incoming[next];
        next = next + 1 == messages ? 0 : next + 1;
        long before = m.outstanding();
        int start = (int) m.received();
        if (start + segment <= m.granted) {
            m.ranges.add(start, start + segment);
            grants.received(m, before);
        }
        grants.schedule(sink);
        return grants.incoming();
    }

    /** The sender takes the SRPT head and sends one segment of it. */
    @Benchmark
    public void srptSendOneSegment(Blackhole bh) {
        OutgoingMessage head = senders.peek();
        head.sent += 1; // the key only shrinks for the head: the heap stays ordered
        if (!head.sendable()) { // finished: the same message comes back as a new one
            senders.pollHead();
            head.restart();
            head.granted = head.length;
            senders.offer(head);
        }
        bh.consume(head);
    }
}
