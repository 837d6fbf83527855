package io.homa.core.wire;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;

/**
 * The decoder fuzz target's body ({@link DecoderFuzzTarget}) over random inputs, on every JDK
 * (the Jazzer run needs a JDK its agent supports; see docs/security.md).
 */
class DecoderFuzzPropertyTest {
    @Property(tries = 3000)
    void randomBytes(@ForAll @Size(max = 200) byte[] input) {
        DecoderFuzzTarget.check(input);
    }

    /** Inputs whose datagram starts like a Homa packet, so that the type-specific checks are reached. */
    @Property(tries = 3000)
    void homaLookingBytes(@ForAll("homaLooking") byte[] input) {
        DecoderFuzzTarget.check(input);
    }

    /** The stored seeds of the Jazzer target are valid packets of every type (its starting points). */
    @Example
    void storedSeeds_decodeToEveryType() throws Exception {
        java.util.Set<PacketType> seen = java.util.EnumSet.noneOf(PacketType.class);
        for (String name : new String[]{"data", "data-empty", "grant", "resend", "rpc-unknown", "busy", "cutoffs",
                "need-ack", "ack", "overloaded", "cancel", "rpc-unknown-since"}) {
            try (java.io.InputStream s = getClass().getResourceAsStream("DecoderFuzzTestInputs/decoder/" + name)) {
                byte[] input = s.readAllBytes();
                DecodedPacket p = new DecodedPacket();
                java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(input, 2, input.length - 2);
                org.junit.jupiter.api.Assertions.assertNull(PacketDecoder.decode(b, 64 << 20, p), name);
                seen.add(p.type);
                DecoderFuzzTarget.check(input);
            }
        }
        org.junit.jupiter.api.Assertions.assertEquals(java.util.EnumSet.allOf(PacketType.class), seen);
    }

    @Provide
    Arbitrary<byte[]> homaLooking() {
        Arbitrary<Integer> length = Arbitraries.of(12, 13, 20, 24, 40, 41, 48, 16, 26, 36, 46, 56, 66, 100, 1472);
        return length.flatMap(n -> Arbitraries.bytes().array(byte[].class).ofSize(n + 2).map(b -> {
            b[2] = 0x48;
            b[3] = 0x4D;
            b[4] = 1;
            b[5] = (byte) (0x10 + Math.floorMod(b[5], 9));
            if (n > 40 && b[0] % 2 == 0) {
                // a DATA header with small, consistent numbers: length, incoming, offset
                java.nio.ByteBuffer h = java.nio.ByteBuffer.wrap(b, 2, n);
                h.putInt(2 + 12, n + 100);
                h.putInt(2 + 16, 10);
                h.putInt(2 + 20, 5);
                b[2 + 26] &= 1;
                b[2 + 35] &= (byte) 0xFE;
            }
            return b;
        }));
    }
}
