package io.homa.core.psp;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The body of the security header's fuzz targets (Jazzer: {@link PspFuzzTest}; jqwik:
 * {@link PspFuzzPropertyTest}). The input's first byte chooses a mutation of a genuine sealed
 * packet or raw bytes; then the rest. Invariants: opening never throws, never writes past the
 * output or moves its position on a refusal, and accepts nothing but the genuine packet (each
 * run's receiver is fresh, so the genuine one opens once and its replay is refused).
 */
final class PspFuzzTarget {
    private static final PspMasterKeys KEYS = new PspMasterKeys(0, new byte[32]);
    private static final ByteBuffer GENUINE;

    static {
        ByteBuffer packet = PspPacketsTest.dataPacket(64);
        GENUINE = ByteBuffer.allocate(packet.capacity() + PspFormat.OVERHEAD);
        new PspSealer(KEYS).seal(packet, 0, packet.capacity(), GENUINE);
        GENUINE.flip();
    }

    private PspFuzzTarget() {
    }

    static void check(byte[] input) {
        ByteBuffer in;
        boolean genuine = false;
        if (input.length > 0 && (input[0] & 1) == 0) { // raw bytes after the first
            in = ByteBuffer.wrap(input, 1, input.length - 1).slice();
        } else { // the genuine packet with the input's bytes xor-ed over it from the start
            byte[] g = new byte[GENUINE.limit()];
            GENUINE.duplicate().get(g);
            boolean changed = false;
            for (int i = 1; i < input.length && i - 1 < g.length; i++) {
                g[i - 1] ^= input[i];
                changed |= input[i] != 0;
            }
            genuine = !changed;
            in = ByteBuffer.wrap(g);
        }
        PspOpener opener = new PspOpener(new PspReceiveState(KEYS));
        ByteBuffer out = ByteBuffer.allocate(in.remaining() + 8);
        out.position(3);
        PspDrop d = opener.open(in, 0, in.remaining(), out);
        if (d == null) {
            if (!genuine) {
                throw new AssertionError("a changed or forged packet opened: " + java.util.Arrays.toString(input));
            }
            assertEquals(PspDrop.REPLAY, opener.open(in, 0, in.remaining(), ByteBuffer.allocate(in.remaining())));
        } else {
            assertEquals(3, out.position(), "a refusal moved the output");
            if (genuine) {
                throw new AssertionError("the genuine packet was refused: " + d);
            }
        }
        PspFormat.sealedLength(in, 0, in.remaining()); // never throws either
    }
}
