package io.homa.bench.jmh;

import io.homa.core.psp.PspDrop;
import io.homa.core.psp.PspFormat;
import io.homa.core.psp.PspMasterKeys;
import io.homa.core.psp.PspOpener;
import io.homa.core.psp.PspReceiveState;
import io.homa.core.psp.PspSealer;
import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * The security layer's cost per packet: one DATA packet of {@code payload} bytes sealed and then
 * opened ({@link PspSealer}, {@link PspOpener}: AES-GCM-128 through the JCA, the JDK's provider or Amazon
 * Corretto Crypto Provider's), on heap arrays
 * (what the shell uses) or direct buffers. 1,432 bytes is a full segment at MTU 1,500 (a 1,472-byte
 * sealed datagram); 65,435 the largest at loopback's MTU. {@code -prof gc} gives the garbage.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@State(Scope.Thread)
public class PspBenchmark {
    @Param({"100", "1400", "65435"})
    int payload;

    @Param({"heap", "direct"})
    String memory;

    /** Whose AES-GCM: the JDK's (the JCA's order) or Amazon Corretto Crypto Provider's. */
    @Param({"jdk", "accp"})
    String provider;

    private PspSealer sealer;
    private PspOpener opener;
    private ByteBuffer packet;
    private ByteBuffer sealed;
    private ByteBuffer opened;
    private int length;

    @Setup
    public void setUp() {
        PspMasterKeys keys = new PspMasterKeys(PspFormat.VERSION_GCM_128, new byte[32]);
        java.security.Provider p = provider.equals("accp")
                ? com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider.INSTANCE : null;
        sealer = PspSealer.withProvider(keys, p);
        opener = new PspOpener(new PspReceiveState(keys), p);
        length = WireFormat.DATA_HEADER + payload;
        boolean direct = memory.equals("direct");
        packet = direct ? ByteBuffer.allocateDirect(length) : ByteBuffer.allocate(length);
        sealed = direct ? ByteBuffer.allocateDirect(length + PspFormat.OVERHEAD) : ByteBuffer.allocate(length + PspFormat.OVERHEAD);
        opened = direct ? ByteBuffer.allocateDirect(length + PspFormat.OVERHEAD) : ByteBuffer.allocate(length + PspFormat.OVERHEAD);
        packet.putShort(WireFormat.OFF_MAGIC, (short) WireFormat.MAGIC);
        packet.put(WireFormat.OFF_VERSION, (byte) WireFormat.VERSION);
        packet.put(WireFormat.OFF_TYPE, (byte) PacketType.DATA.code);
        packet.putLong(WireFormat.OFF_SENDER_ID, 42);
        packet.putShort(WireFormat.DATA_OFF_SEGMENT_LENGTH, (short) payload);
    }

    @Benchmark
    public PspDrop sealAndOpen() {
        sealed.clear();
        sealer.seal(packet, 0, length, sealed);
        opened.clear();
        return opener.open(sealed, 0, length + PspFormat.OVERHEAD, opened);
    }
}
