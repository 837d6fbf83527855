package io.homa.bench.jmh;

import io.homa.core.EngineConfig;
import io.homa.core.EngineEvent;
import io.homa.core.HomaEngine;
import io.homa.core.Transmit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * The engine's hot path without I/O: one complete 100 B RPC between two {@link HomaEngine}s joined
 * in memory (startRequest, pollTransmit, onDatagram, pollEvent, respond, and back), with a virtual
 * clock that advances 2 µs per RPC and fires the engines' timers when due. Every buffer the
 * harness uses is reused, so what {@code -prof gc} reports per operation is the engine's own
 * allocation. Target: zero.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class EngineRoundTripBenchmark {
    /** Virtual time between RPCs. */
    private static final long STEP_NANOS = 2_000;
    /** Exchanges after which a round trip that has not finished is a bug, not a slow RPC. */
    private static final int MAX_ROUNDS = 64;

    private final InetSocketAddress clientAddress = new InetSocketAddress("127.0.0.1", 40001);
    private final InetSocketAddress serverAddress = new InetSocketAddress("127.0.0.1", 40002);
    private HomaEngine client;
    private HomaEngine server;
    private ByteBuffer wire;
    private final ByteBuffer request = ByteBuffer.allocateDirect(100);
    private final ByteBuffer response = ByteBuffer.allocateDirect(100);
    private long now = 1_000_000_000L;

    @Setup
    public void setUp() {
        EngineConfig cfg = EngineConfig.builder().pacerEnabled(false).build();
        client = new HomaEngine(cfg, 1);
        server = new HomaEngine(cfg, 2);
        wire = ByteBuffer.allocateDirect(cfg.maxDatagram() * cfg.maxGsoSegments);
        for (int i = 0; i < 100; i++) {
            request.put(i, (byte) i);
            response.put(i, (byte) -i);
        }
    }

    @Benchmark
    public long rpc100B() {
        now += STEP_NANOS;
        timers();
        long id = client.startRequest(now, serverAddress, request);
        for (int round = 0; round < MAX_ROUNDS; round++) {
            boolean moved = pump(client, clientAddress, server) | pump(server, serverAddress, client);
            EngineEvent e;
            while ((e = server.pollEvent()) != null) {
                if (e.kind() == EngineEvent.Kind.REQUEST) {
                    server.respond(now, e.peer(), e.rpcId(), response);
                    moved = true;
                }
                server.recycle(e);
            }
            while ((e = client.pollEvent()) != null) {
                if (e.rpcId() == id) {
                    if (e.kind() != EngineEvent.Kind.RESPONSE) {
                        throw new IllegalStateException("rpc failed: " + e);
                    }
                    pump(client, clientAddress, server); // let acks and grants settle
                    pump(server, serverAddress, client);
                    int length = e.message().length();
                    client.recycle(e);
                    return length;
                }
            }
            if (!moved) {
                now = Math.max(now + 1, Math.min(client.nextDeadline(), server.nextDeadline()));
                timers();
            }
        }
        throw new IllegalStateException("rpc did not complete in " + MAX_ROUNDS + " rounds: "
                + client.describe() + " / " + server.describe());
    }

    private void timers() {
        if (now >= client.nextDeadline()) {
            client.onTimer(now);
        }
        if (now >= server.nextDeadline()) {
            server.onTimer(now);
        }
    }

    /** Delivers everything {@code from} wants to send now; whether anything moved. */
    private boolean pump(HomaEngine from, InetSocketAddress fromAddress, HomaEngine to) {
        boolean moved = false;
        while (true) {
            wire.clear();
            Transmit t = from.pollTransmit(now, wire);
            if (t == null) {
                return moved;
            }
            moved = true;
            int at = 0;
            for (int i = 0; i < t.segments(); i++) {
                int len = Math.min(t.segmentSize(), t.length() - at);
                wire.limit(at + len).position(at);
                to.onDatagram(now, fromAddress, wire);
                wire.limit(wire.capacity());
                at += len;
            }
        }
    }
}
