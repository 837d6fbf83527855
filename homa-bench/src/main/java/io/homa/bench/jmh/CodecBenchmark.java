package io.homa.bench.jmh;

import io.homa.core.EngineConfig;
import io.homa.core.wire.DecodedPacket;
import io.homa.core.wire.PacketDecoder;
import io.homa.core.wire.PacketEncoder;
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

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * The wire codec on the hot path: encoding into and decoding from reused direct buffers, as the
 * I/O shell does. Target: zero allocation per operation ({@code -prof gc}: gc.alloc.rate.norm ≈ 0).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class CodecBenchmark {
    private static final int MAX_MESSAGE = EngineConfig.defaults().maxMessageLength;
    private static final int FULL_SEGMENT = EngineConfig.defaults().segmentPayload();

    private final ByteBuffer out = ByteBuffer.allocateDirect(EngineConfig.defaults().maxDatagram());
    private final ByteBuffer payload = ByteBuffer.allocateDirect(FULL_SEGMENT);
    private final DecodedPacket decoded = new DecodedPacket();
    private final long[] ackIds = {2, 4, 6};
    private final int[] ackPorts = {4000, 4001, 4002};
    private ByteBuffer data100;
    private ByteBuffer dataFull;
    private ByteBuffer grant;
    private ByteBuffer ack;

    @Setup
    public void setUp() {
        for (int i = 0; i < FULL_SEGMENT; i++) {
            payload.put(i, (byte) i);
        }
        data100 = ByteBuffer.allocateDirect(out.capacity());
        PacketEncoder.data(data100, 42, 100, 100, 0, 1, false, 8, 4000, payload, 0, 100);
        data100.flip();
        dataFull = ByteBuffer.allocateDirect(out.capacity());
        PacketEncoder.data(dataFull, 42, 1_000_000, 60_000, 0, 1, false, 0, 0, payload, 0, FULL_SEGMENT);
        dataFull.flip();
        grant = ByteBuffer.allocateDirect(64);
        PacketEncoder.grant(grant, 43, 120_000, 3);
        grant.flip();
        ack = ByteBuffer.allocateDirect(64);
        PacketEncoder.ack(ack, 42, ackIds, ackPorts, ackIds.length);
        ack.flip();
    }

    @Benchmark
    public int encodeData100B() {
        out.clear();
        return PacketEncoder.data(out, 42, 100, 100, 0, 1, false, 8, 4000, payload, 0, 100);
    }

    @Benchmark
    public int encodeDataFullSegment() {
        out.clear();
        return PacketEncoder.data(out, 42, 1_000_000, 60_000, 0, 1, false, 0, 0, payload, 0, FULL_SEGMENT);
    }

    @Benchmark
    public int encodeGrant() {
        out.clear();
        return PacketEncoder.grant(out, 43, 120_000, 3);
    }

    @Benchmark
    public int encodeAck() {
        out.clear();
        return PacketEncoder.ack(out, 42, ackIds, ackPorts, ackIds.length);
    }

    @Benchmark
    public int decodeData100B() {
        return PacketDecoder.decode(data100, MAX_MESSAGE, decoded) == null ? decoded.payloadLength : -1;
    }

    @Benchmark
    public int decodeDataFullSegment() {
        return PacketDecoder.decode(dataFull, MAX_MESSAGE, decoded) == null ? decoded.payloadLength : -1;
    }

    @Benchmark
    public int decodeGrant() {
        return PacketDecoder.decode(grant, MAX_MESSAGE, decoded) == null ? decoded.grantOrResendOffset : -1;
    }

    @Benchmark
    public int decodeAck() {
        return PacketDecoder.decode(ack, MAX_MESSAGE, decoded) == null ? decoded.ackCount : -1;
    }
}
