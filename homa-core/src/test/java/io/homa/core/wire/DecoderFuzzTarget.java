package io.homa.core.wire;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The body of the decoder fuzz targets, shared by the Jazzer target ({@link DecoderFuzzTest}) and
 * its jqwik twin ({@link DecoderFuzzPropertyTest}). The input's first bytes choose the
 * {@code maxMessageLength} and where the datagram sits in its buffer; the rest is the datagram.
 *
 * <p>Invariants: decoding never throws and never moves the buffer's position or limit; a packet it
 * accepts satisfies every field constraint of its type; an accepted packet, encoded again with
 * {@link PacketEncoder} and decoded, gives the same fields; a view in little-endian order decodes
 * the same way.
 */
final class DecoderFuzzTarget {
    private static final int[] MAX_LENGTHS = {0, 1, 1432, 40_000, 1_000_000, 64 << 20, Integer.MAX_VALUE - 65_536};

    private DecoderFuzzTarget() {
    }

    static void check(byte[] input) {
        int max = input.length > 0 ? MAX_LENGTHS[(input[0] & 0xFF) % MAX_LENGTHS.length] : 64 << 20;
        int pad = input.length > 1 ? input[1] & 0x0F : 0;
        int start = Math.min(2, input.length);
        int len = input.length - start;

        ByteBuffer b = ByteBuffer.allocate(pad + len + 3);
        b.position(pad);
        b.put(input, start, len);
        b.position(pad).limit(pad + len);
        DecodedPacket p = new DecodedPacket();
        DropReason r = PacketDecoder.decode(b, max, p);
        assertEquals(pad, b.position(), "position moved");
        assertEquals(pad + len, b.limit(), "limit moved");

        DecodedPacket le = new DecodedPacket();
        assertEquals(r, PacketDecoder.decode(b.duplicate().order(ByteOrder.LITTLE_ENDIAN), max, le),
                "byte order of the view changed the verdict");
        if (r != null) {
            return;
        }
        PacketDecoderTest.assertSelfConsistent(p, pad, len, max);
        assertSameFields(p, le);

        ByteBuffer again = ByteBuffer.allocate(len + 8);
        encode(again, p, b);
        again.flip();
        DecodedPacket q = new DecodedPacket();
        assertNull(PacketDecoder.decode(again, max, q), () -> "re-encoded " + p + " was refused");
        assertSameFields(p, q);
        assertEquals(len, again.remaining(), "re-encoded length");
        if (p.type == PacketType.DATA) {
            byte[] x = new byte[p.payloadLength];
            byte[] y = new byte[q.payloadLength];
            b.get(p.payloadOffset, x);
            again.get(q.payloadOffset, y);
            assertArrayEquals(x, y, "payload");
        }
    }

    private static void encode(ByteBuffer out, DecodedPacket p, ByteBuffer src) {
        switch (p.type) {
            case DATA -> PacketEncoder.data(out, p.senderId, p.messageLength, p.incoming, p.offset, p.cutoffVersion,
                    p.retransmit, p.ackId, p.deadlineMillis, src, p.payloadOffset, p.payloadLength);
            case GRANT -> PacketEncoder.grant(out, p.senderId, p.grantOrResendOffset, p.priority);
            case RESEND -> PacketEncoder.resend(out, p.senderId, p.grantOrResendOffset, p.resendLength, p.priority,
                    p.wantsUptime ? WireFormat.RESEND_FLAG_WANTS_UPTIME : 0);
            case RPC_UNKNOWN, BUSY, NEED_ACK, OVERLOADED, CANCEL -> PacketEncoder.bare(out, p.type, p.senderId);
            case RPC_UNKNOWN_SINCE -> PacketEncoder.rpcUnknownSince(out, p.senderId, p.incarnation, p.uptimeNanos);
            case CUTOFFS -> PacketEncoder.cutoffs(out, p.senderId, p.cutoffs, p.cutoffVersion, p.unscheduledUnits);
            case ACK -> PacketEncoder.ack(out, p.senderId, p.ackIds, p.ackPorts, p.ackCount);
        }
    }

    private static void assertSameFields(DecodedPacket p, DecodedPacket q) {
        assertEquals(p.type, q.type);
        assertEquals(p.senderId, q.senderId);
        switch (p.type) {
            case DATA -> {
                assertEquals(p.messageLength, q.messageLength);
                assertEquals(p.incoming, q.incoming);
                assertEquals(p.offset, q.offset);
                assertEquals(p.cutoffVersion, q.cutoffVersion);
                assertEquals(p.retransmit, q.retransmit);
                assertEquals(p.ackId, q.ackId);
                assertEquals(p.deadlineMillis, q.deadlineMillis);
                assertEquals(p.payloadLength, q.payloadLength);
            }
            case GRANT -> {
                assertEquals(p.grantOrResendOffset, q.grantOrResendOffset);
                assertEquals(p.priority, q.priority);
            }
            case RESEND -> {
                assertEquals(p.grantOrResendOffset, q.grantOrResendOffset);
                assertEquals(p.resendLength, q.resendLength);
                assertEquals(p.priority, q.priority);
                assertEquals(p.wantsUptime, q.wantsUptime);
            }
            case RPC_UNKNOWN_SINCE -> {
                assertEquals(p.incarnation, q.incarnation);
                assertEquals(p.uptimeNanos, q.uptimeNanos);
            }
            case CUTOFFS -> {
                assertArrayEquals(p.cutoffs, q.cutoffs);
                assertEquals(p.cutoffVersion, q.cutoffVersion);
                assertEquals(p.unscheduledUnits, q.unscheduledUnits);
            }
            case ACK -> {
                assertEquals(p.ackCount, q.ackCount);
                for (int i = 0; i < p.ackCount; i++) {
                    assertEquals(p.ackIds[i], q.ackIds[i]);
                    assertEquals(p.ackPorts[i], q.ackPorts[i]);
                }
            }
            default -> { }
        }
    }
}
