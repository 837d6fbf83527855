package io.homa.core.wire;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Round trips: whatever {@link PacketEncoder} writes, {@link PacketDecoder} reads back with the
 * same fields. Also the exact byte layout of the fields that {@link WireFormat} documents.
 */
class PacketEncoderTest {
    private static final int MAX = 1_000_000;
    private static final int[] DEFAULT_CUTOFFS = {0, 0, 0, 0, 1_000_000, 15_000, 2_800, 200};

    /** Decodes [0, position) of {@code b}; asserts it is valid. */
    private static DecodedPacket decodeWritten(ByteBuffer b) {
        ByteBuffer r = b.duplicate();
        r.flip();
        DecodedPacket p = new DecodedPacket();
        DropReason reason = PacketDecoder.decode(r, MAX, p);
        assertNull(reason, () -> "valid packet rejected: " + reason);
        return p;
    }

    private static ByteBuffer payload(int n, int seed) {
        byte[] bytes = new byte[n];
        for (int i = 0; i < n; i++) {
            bytes[i] = (byte) (i * 31 + seed);
        }
        return ByteBuffer.wrap(bytes);
    }

    // ------------------------------------------------------------------ DATA

    @Test
    void data_basicFields_roundTrip() {
        ByteBuffer b = ByteBuffer.allocate(2000);
        PacketEncoder.data(b, 42, 10_000, 5_000, 1432, 3, false, 0, 0, payload(1432, 1), 0, 1432);
        DecodedPacket p = decodeWritten(b);
        assertEquals(PacketType.DATA, p.type);
        assertEquals(42, p.senderId);
        assertEquals(10_000, p.messageLength);
        assertEquals(5_000, p.incoming);
        assertEquals(1432, p.offset);
        assertEquals(3, p.cutoffVersion);
        assertFalse(p.retransmit);
        assertEquals(0, p.ackId);
        assertEquals(0, p.deadlineMillis);
        assertEquals(WireFormat.DATA_HEADER, p.payloadOffset);
        assertEquals(1432, p.payloadLength);
    }

    @Test
    void data_zeroPayloadInZeroLengthMessage_roundTrip() {
        ByteBuffer b = ByteBuffer.allocate(100);
        int n = PacketEncoder.data(b, 8, 0, 0, 0, 0, false, 0, 0, ByteBuffer.allocate(0), 0, 0);
        assertEquals(WireFormat.DATA_HEADER, n);
        DecodedPacket p = decodeWritten(b);
        assertEquals(PacketType.DATA, p.type);
        assertEquals(0, p.messageLength);
        assertEquals(0, p.incoming);
        assertEquals(0, p.offset);
        assertEquals(0, p.payloadLength);
    }

    @Test
    void data_retransmitFlagAndPiggybackedAck_roundTrip() {
        ByteBuffer b = ByteBuffer.allocate(200);
        PacketEncoder.data(b, 7, 300, 300, 100, 9, true, 1_000_000_002L, 4242, payload(100, 2), 0, 100);
        DecodedPacket p = decodeWritten(b);
        assertTrue(p.retransmit);
        assertEquals(1_000_000_002L, p.ackId);
        assertEquals(4242, p.deadlineMillis);
        assertEquals(7, p.senderId);
        assertEquals(100, p.offset);
        assertEquals(9, p.cutoffVersion);
    }

    @Test
    void data_retransmitFlag_isBitZeroOfFlagsByte() {
        ByteBuffer b = ByteBuffer.allocate(200);
        PacketEncoder.data(b, 2, 10, 10, 0, 0, true, 0, 0, payload(10, 0), 0, 10);
        assertEquals(WireFormat.FLAG_RETRANSMIT, b.get(WireFormat.DATA_OFF_FLAGS));
        b.clear();
        PacketEncoder.data(b, 2, 10, 10, 0, 0, false, 0, 0, payload(10, 0), 0, 10);
        assertEquals(0, b.get(WireFormat.DATA_OFF_FLAGS));
    }

    @Test
    void data_payloadBytesCopiedBehindHeader() {
        ByteBuffer src = payload(500, 7);
        ByteBuffer b = ByteBuffer.allocate(1000);
        PacketEncoder.data(b, 2, 1000, 1000, 200, 0, false, 0, 0, src, 200, 300);
        DecodedPacket p = decodeWritten(b);
        assertEquals(300, p.payloadLength);
        byte[] got = new byte[300];
        b.get(p.payloadOffset, got);
        assertArrayEquals(Arrays.copyOfRange(src.array(), 200, 500), got);
    }

    @Test
    void data_returnsBytesWrittenAndAdvancesPosition() {
        ByteBuffer b = ByteBuffer.allocate(1000);
        b.position(10);
        int n = PacketEncoder.data(b, 2, 50, 50, 0, 0, false, 0, 0, payload(50, 0), 0, 50);
        assertEquals(WireFormat.DATA_HEADER + 50, n);
        assertEquals(10 + WireFormat.DATA_HEADER + 50, b.position());
    }

    @Test
    void data_leavesPayloadBufferPositionAndLimitAlone() {
        ByteBuffer src = payload(100, 3);
        src.position(5).limit(90);
        ByteBuffer b = ByteBuffer.allocate(1000);
        PacketEncoder.data(b, 2, 100, 100, 10, 0, false, 0, 0, src, 10, 50);
        assertEquals(5, src.position());
        assertEquals(90, src.limit());
    }

    @Test
    void data_atNonZeroPosition_writesAtThatPosition() {
        ByteBuffer b = ByteBuffer.allocate(1000);
        b.position(123);
        PacketEncoder.data(b, 44, 20, 20, 0, 1, false, 0, 0, payload(20, 5), 0, 20);
        ByteBuffer view = b.duplicate();
        view.limit(b.position()).position(123);
        DecodedPacket p = new DecodedPacket();
        assertNull(PacketDecoder.decode(view, MAX, p));
        assertEquals(44, p.senderId);
        assertEquals(123 + WireFormat.DATA_HEADER, p.payloadOffset);
        assertEquals(payload(20, 5).get(0), b.get(p.payloadOffset));
        for (int i = 0; i < 123; i++) {
            assertEquals(0, b.get(i), "byte before the packet was touched");
        }
    }

    @Test
    void data_lastSegmentEndingExactlyAtMessageEnd_roundTrip() {
        ByteBuffer b = ByteBuffer.allocate(1000);
        PacketEncoder.data(b, 2, 3000, 3000, 2864, 0, false, 0, 0, payload(136, 0), 0, 136);
        DecodedPacket p = decodeWritten(b);
        assertEquals(2864, p.offset);
        assertEquals(136, p.payloadLength);
        assertEquals(p.messageLength, p.offset + p.payloadLength);
    }

    @Test
    void data_extremeFieldValues_roundTrip() {
        ByteBuffer b = ByteBuffer.allocate(100);
        PacketEncoder.data(b, Long.MAX_VALUE, MAX, MAX, MAX - 1, 0xFFFF, true, -2L, WireFormat.MAX_DEADLINE_MILLIS, payload(1, 0), 0, 1);
        DecodedPacket p = decodeWritten(b);
        assertEquals(Long.MAX_VALUE, p.senderId);
        assertEquals(MAX, p.messageLength);
        assertEquals(MAX, p.incoming);
        assertEquals(MAX - 1, p.offset);
        assertEquals(0xFFFF, p.cutoffVersion);
        assertEquals(-2L, p.ackId);
        assertEquals(WireFormat.MAX_DEADLINE_MILLIS, p.deadlineMillis);
    }

    @Test
    void data_deadlineIsSplitOverTheOldReservedByteAndAckPort() {
        ByteBuffer b = ByteBuffer.allocate(100);
        Arrays.fill(b.array(), (byte) 0x5A);
        PacketEncoder.data(b, 2, 10, 10, 0, 0, true, 4, 0x12_3456, payload(10, 0), 0, 10);
        assertEquals(0x12, b.get(27), "deadline, high byte (reserved before)");
        assertEquals(0x3456, b.getShort(36), "deadline, low 16 bits (the unused ack port before)");
        assertEquals(10, b.getShort(WireFormat.DATA_OFF_SEGMENT_LENGTH), "the segment's payload length");
        assertEquals(0x12_3456, decodeWritten(b).deadlineMillis);
    }

    @Test
    void dataHeader_matchesHeaderOfDataAndLeavesPosition() {
        ByteBuffer a = ByteBuffer.allocate(200);
        PacketEncoder.data(a, 12, 1000, 800, 400, 5, true, 6, 7, payload(100, 0), 0, 100);
        ByteBuffer h = ByteBuffer.allocate(200);
        h.position(17);
        PacketEncoder.dataHeader(h, 50, 12, 1000, 800, 400, 5, true, 6, 7, 100);
        assertEquals(17, h.position());
        assertArrayEquals(Arrays.copyOfRange(a.array(), 0, WireFormat.DATA_HEADER),
                Arrays.copyOfRange(h.array(), 50, 50 + WireFormat.DATA_HEADER));
    }

    @Test
    void data_fieldsAreBigEndianAtDocumentedOffsets() {
        ByteBuffer b = ByteBuffer.allocate(100);
        PacketEncoder.data(b, 0x0102030405060708L, 0x00112233, 0x00001122, 0x00000011, 0xABCD, false,
                0x1020304050607080L, 0x779988, payload(0x22, 0), 0, 0x22);
        byte[] a = b.array();
        assertEquals(0x48, a[0]);
        assertEquals(0x4D, a[1]);
        assertEquals(2, a[2]);
        assertEquals(0x10, a[3]);
        assertArrayEquals(new byte[]{1, 2, 3, 4, 5, 6, 7, 8}, Arrays.copyOfRange(a, 4, 12));
        assertArrayEquals(new byte[]{0x00, 0x22}, Arrays.copyOfRange(a, 38, 40), "segment length");
        assertArrayEquals(new byte[]{0x00, 0x11, 0x22, 0x33}, Arrays.copyOfRange(a, 12, 16));
        assertArrayEquals(new byte[]{(byte) 0xAB, (byte) 0xCD}, Arrays.copyOfRange(a, 24, 26));
        assertArrayEquals(new byte[]{0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, (byte) 0x80},
                Arrays.copyOfRange(a, 28, 36));
        assertArrayEquals(new byte[]{(byte) 0x99, (byte) 0x88}, Arrays.copyOfRange(a, 36, 38));
        assertEquals(0x77, a[27], "deadline high byte");
    }

    // ------------------------------------------------------------------ GRANT

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3, 4, 5, 6, 7})
    void grant_everyPriority_roundTrip(int priority) {
        ByteBuffer b = ByteBuffer.allocate(100);
        int n = PacketEncoder.grant(b, 9, 123_456, priority);
        assertEquals(WireFormat.GRANT_LENGTH, n);
        DecodedPacket p = decodeWritten(b);
        assertEquals(PacketType.GRANT, p.type);
        assertEquals(9, p.senderId);
        assertEquals(123_456, p.grantOrResendOffset);
        assertEquals(priority, p.priority);
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 1432, MAX - 1, MAX})
    void grant_offsetFromZeroToMax_roundTrip(int offset) {
        ByteBuffer b = ByteBuffer.allocate(100);
        PacketEncoder.grant(b, 2, offset, 3);
        assertEquals(offset, decodeWritten(b).grantOrResendOffset);
    }

    @Test
    void grant_advancesPositionByGrantLength() {
        ByteBuffer b = ByteBuffer.allocate(100);
        b.position(30);
        PacketEncoder.grant(b, 2, 1, 1);
        assertEquals(30 + WireFormat.GRANT_LENGTH, b.position());
    }

    @Test
    void grant_priorityByteThenThreeReservedZeroBytes() {
        ByteBuffer b = ByteBuffer.allocate(100);
        Arrays.fill(b.array(), (byte) 0x77);
        PacketEncoder.grant(b, 2, 1, 5);
        assertEquals(5, b.get(WireFormat.GRANT_OFF_PRIORITY));
        assertEquals(0, b.get(WireFormat.GRANT_OFF_PRIORITY + 1));
        assertEquals(0, b.get(WireFormat.GRANT_OFF_PRIORITY + 2));
        assertEquals(0, b.get(WireFormat.GRANT_OFF_PRIORITY + 3));
    }

    // ------------------------------------------------------------------ RESEND

    @Test
    void resend_fields_roundTrip() {
        ByteBuffer b = ByteBuffer.allocate(100);
        int n = PacketEncoder.resend(b, 11, 2864, 1432, 2);
        assertEquals(WireFormat.RESEND_LENGTH, n);
        assertEquals(WireFormat.RESEND_LENGTH, b.position());
        DecodedPacket p = decodeWritten(b);
        assertEquals(PacketType.RESEND, p.type);
        assertEquals(11, p.senderId);
        assertEquals(2864, p.grantOrResendOffset);
        assertEquals(1432, p.resendLength);
        assertEquals(2, p.priority);
    }

    @Test
    void resend_lengthMinusOneMeansEverything_roundTrip() {
        ByteBuffer b = ByteBuffer.allocate(100);
        PacketEncoder.resend(b, 4, 0, -1, 7);
        DecodedPacket p = decodeWritten(b);
        assertEquals(0, p.grantOrResendOffset);
        assertEquals(-1, p.resendLength);
        assertEquals(7, p.priority);
    }

    @Test
    void resend_lengthZero_roundTrip() {
        ByteBuffer b = ByteBuffer.allocate(100);
        PacketEncoder.resend(b, 4, 500, 0, 0);
        DecodedPacket p = decodeWritten(b);
        assertEquals(500, p.grantOrResendOffset);
        assertEquals(0, p.resendLength);
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3, 4, 5, 6, 7})
    void resend_everyPriority_roundTrip(int priority) {
        ByteBuffer b = ByteBuffer.allocate(100);
        PacketEncoder.resend(b, 4, 10, 20, priority);
        assertEquals(priority, decodeWritten(b).priority);
    }

    @Test
    void resend_rangeEndingExactlyAtMax_roundTrip() {
        ByteBuffer b = ByteBuffer.allocate(100);
        PacketEncoder.resend(b, 4, MAX - 100, 100, 1);
        DecodedPacket p = decodeWritten(b);
        assertEquals(MAX - 100, p.grantOrResendOffset);
        assertEquals(100, p.resendLength);
    }

    // ------------------------------------------------------------------ header-only types

    @ParameterizedTest
    @EnumSource(value = PacketType.class, names = {"RPC_UNKNOWN", "BUSY", "NEED_ACK", "OVERLOADED", "CANCEL"})
    void bare_headerOnlyTypes_roundTrip(PacketType type) {
        ByteBuffer b = ByteBuffer.allocate(100);
        int n = PacketEncoder.bare(b, type, 0x7FFF_0000_0000_0003L);
        assertEquals(WireFormat.BARE_LENGTH, n);
        assertEquals(WireFormat.BARE_LENGTH, b.position());
        DecodedPacket p = decodeWritten(b);
        assertEquals(type, p.type);
        assertEquals(0x7FFF_0000_0000_0003L, p.senderId);
    }

    @ParameterizedTest
    @EnumSource(value = PacketType.class, names = {"DATA", "GRANT", "RESEND", "CUTOFFS", "ACK"})
    void bare_typesWithFields_rejectedWithoutWriting(PacketType type) {
        ByteBuffer b = ByteBuffer.allocate(100);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PacketEncoder.bare(b, type, 2));
        assertTrue(e.getMessage().contains(type.name()), e.getMessage());
        assertEquals(0, b.position());
        assertEquals(0, b.get(0));
    }

    @ParameterizedTest
    @EnumSource(PacketType.class)
    void everyType_writesMagicVersionAndItsCode(PacketType type) {
        ByteBuffer b = ByteBuffer.allocate(200);
        switch (type) {
            case DATA -> PacketEncoder.data(b, 2, 1, 1, 0, 0, false, 0, 0, payload(1, 0), 0, 1);
            case GRANT -> PacketEncoder.grant(b, 2, 1, 1);
            case RESEND -> PacketEncoder.resend(b, 2, 1, 1, 1);
            case CUTOFFS -> PacketEncoder.cutoffs(b, 2, DEFAULT_CUTOFFS, 1, 0);
            case ACK -> PacketEncoder.ack(b, 2, new long[0], new int[0], 0);
            case RPC_UNKNOWN_SINCE -> PacketEncoder.rpcUnknownSince(b, 3, 5, 7);
            default -> PacketEncoder.bare(b, type, 2);
        }
        assertEquals((short) WireFormat.MAGIC, b.getShort(0));
        assertEquals(WireFormat.VERSION, b.get(2));
        assertEquals(type.code, b.get(3) & 0xFF);
        assertEquals(type, decodeWritten(b).type);
    }

    @ParameterizedTest
    @ValueSource(longs = {2, 3, 0xFFFF_FFFFL, Long.MAX_VALUE, Long.MIN_VALUE, -1L, -2L})
    void senderId_fullSixtyFourBits_roundTrip(long id) {
        ByteBuffer b = ByteBuffer.allocate(100);
        PacketEncoder.bare(b, PacketType.BUSY, id);
        assertEquals(id, decodeWritten(b).senderId);
    }

    // ------------------------------------------------------------------ CUTOFFS

    @Test
    void cutoffs_linuxDefaults_roundTrip() {
        ByteBuffer b = ByteBuffer.allocate(100);
        int n = PacketEncoder.cutoffs(b, 6, DEFAULT_CUTOFFS, 1, 0);
        assertEquals(WireFormat.CUTOFFS_LENGTH, n);
        assertEquals(WireFormat.CUTOFFS_LENGTH, b.position());
        DecodedPacket p = decodeWritten(b);
        assertEquals(PacketType.CUTOFFS, p.type);
        assertArrayEquals(DEFAULT_CUTOFFS, p.cutoffs);
        assertEquals(1, p.cutoffVersion);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 255, 256, 0x7FFF, 0xFFFF})
    void cutoffs_version_roundTrip(int version) {
        ByteBuffer b = ByteBuffer.allocate(100);
        PacketEncoder.cutoffs(b, 6, DEFAULT_CUTOFFS, version, 0);
        assertEquals(version, decodeWritten(b).cutoffVersion);
    }

    @Test
    void cutoffs_extremeValues_roundTrip() {
        int[] c = {Integer.MAX_VALUE, 0, 1, 2, 3, Integer.MAX_VALUE - 1, 65_536, 7};
        ByteBuffer b = ByteBuffer.allocate(100);
        PacketEncoder.cutoffs(b, 6, c, 2, 0);
        assertArrayEquals(c, decodeWritten(b).cutoffs);
    }

    @Test
    void cutoffs_valueIndexIsPriorityLevel() {
        int[] c = {10, 11, 12, 13, 14, 15, 16, 17};
        ByteBuffer b = ByteBuffer.allocate(100);
        PacketEncoder.cutoffs(b, 6, c, 2, 0);
        for (int level = 0; level < 8; level++) {
            assertEquals(10 + level, b.getInt(WireFormat.CUTOFFS_OFF_VALUES + 4 * level));
        }
        assertEquals(0, b.getShort(WireFormat.CUTOFFS_OFF_UNSCHEDULED), "0: nothing said of unscheduled bytes");
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 626, 0x7FFF, 0x8000, 0xFFFF})
    void cutoffs_unscheduledUnits_roundTripUnsigned(int units) {
        ByteBuffer b = ByteBuffer.allocate(100);
        PacketEncoder.cutoffs(b, 6, DEFAULT_CUTOFFS, 3, units);
        assertEquals(units, b.getShort(WireFormat.CUTOFFS_OFF_UNSCHEDULED) & 0xFFFF, "bytes 46-47");
        DecodedPacket p = decodeWritten(b);
        assertEquals(units, p.unscheduledUnits);
        assertEquals(3, p.cutoffVersion, "the version beside it is untouched");
    }

    // ------------------------------------------------------------------ ACK

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3, 4, 5})
    void ack_zeroToFiveEntries_roundTrip(int count) {
        long[] ids = {2, 4_000_000_000L, Long.MAX_VALUE - 1, 8, 10};
        int[] ports = {1, 65_535, 0, 4000, 12};
        ByteBuffer b = ByteBuffer.allocate(100);
        int n = PacketEncoder.ack(b, 3, ids, ports, count);
        assertEquals(WireFormat.ACK_OFF_ENTRIES + count * WireFormat.ACK_ENTRY, n);
        assertEquals(n, PacketEncoder.ackLength(count));
        assertEquals(n, b.position());
        DecodedPacket p = decodeWritten(b);
        assertEquals(PacketType.ACK, p.type);
        assertEquals(3, p.senderId);
        assertEquals(count, p.ackCount);
        for (int i = 0; i < count; i++) {
            assertEquals(ids[i], p.ackIds[i], "id " + i);
            assertEquals(ports[i], p.ackPorts[i], "port " + i);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, 6, 255, Integer.MIN_VALUE})
    void ack_countOutsideZeroToFive_throws(int count) {
        ByteBuffer b = ByteBuffer.allocate(200);
        long[] ids = new long[10];
        int[] ports = new int[10];
        assertThrows(IllegalArgumentException.class, () -> PacketEncoder.ack(b, 3, ids, ports, count));
        assertEquals(0, b.position());
    }

    @Test
    void ackLength_isSixteenPlusTenPerEntry() {
        assertEquals(16, PacketEncoder.ackLength(0));
        assertEquals(26, PacketEncoder.ackLength(1));
        assertEquals(66, PacketEncoder.ackLength(5));
    }

    @Test
    void ack_usesOnlyFirstCountEntriesOfLongerArrays() {
        long[] ids = {2, 4, 6, 8, 10, 12};
        int[] ports = {1, 2, 3, 4, 5, 6};
        ByteBuffer b = ByteBuffer.allocate(100);
        PacketEncoder.ack(b, 3, ids, ports, 2);
        DecodedPacket p = decodeWritten(b);
        assertEquals(2, p.ackCount);
        assertEquals(4, p.ackIds[1]);
    }

    // ------------------------------------------------------------------ byte order

    @ParameterizedTest
    @EnumSource(PacketType.class)
    void everyType_littleEndianBuffer_rejected(PacketType type) {
        ByteBuffer b = ByteBuffer.allocate(200).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        assertThrows(IllegalArgumentException.class, () -> {
            switch (type) {
                case DATA -> PacketEncoder.data(b, 2, 1, 1, 0, 0, false, 0, 0, payload(1, 0), 0, 1);
                case GRANT -> PacketEncoder.grant(b, 2, 1, 1);
                case RESEND -> PacketEncoder.resend(b, 2, 1, 1, 1);
                case CUTOFFS -> PacketEncoder.cutoffs(b, 2, DEFAULT_CUTOFFS, 1, 0);
                case ACK -> PacketEncoder.ack(b, 2, new long[0], new int[0], 0);
                default -> PacketEncoder.bare(b, type, 2);
            }
        });
        assertEquals(0, b.position());
    }

    @Test
    void data_littleEndianPayloadBuffer_isFine() {
        ByteBuffer src = payload(10, 1).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        ByteBuffer b = ByteBuffer.allocate(100);
        PacketEncoder.data(b, 2, 10, 10, 0, 0, false, 0, 0, src, 0, 10);
        assertEquals(payload(10, 1).get(9), b.get(WireFormat.DATA_HEADER + 9));
    }

    // ------------------------------------------------------------------ properties

    @Property
    void property_data_roundTrip(@ForAll @LongRange(min = 2) long id,
                                 @ForAll @IntRange(min = 1, max = MAX) int messageLength,
                                 @ForAll @IntRange(min = 0, max = MAX) int incomingSeed,
                                 @ForAll @IntRange(min = 0, max = MAX) int offsetSeed,
                                 @ForAll @IntRange(min = 1, max = 1432) int segmentSeed,
                                 @ForAll @IntRange(min = 0, max = 0xFFFF) int cutoffVersion,
                                 @ForAll boolean retransmit,
                                 @ForAll long ackSeed,
                                 @ForAll @IntRange(min = 0, max = WireFormat.MAX_DEADLINE_MILLIS) int deadline) {
        int incoming = incomingSeed % (messageLength + 1);
        int offset = offsetSeed % messageLength;
        int segment = Math.min(segmentSeed, messageLength - offset);
        long ackId = ackSeed & ~1L;
        ByteBuffer src = payload(segment, (int) id);
        ByteBuffer b = ByteBuffer.allocate(WireFormat.DATA_HEADER + segment);
        PacketEncoder.data(b, id, messageLength, incoming, offset, cutoffVersion, retransmit, ackId, deadline,
                src, 0, segment);
        assertFalse(b.hasRemaining());
        DecodedPacket p = decodeWritten(b);
        assertEquals(id, p.senderId);
        assertEquals(messageLength, p.messageLength);
        assertEquals(incoming, p.incoming);
        assertEquals(offset, p.offset);
        assertEquals(cutoffVersion, p.cutoffVersion);
        assertEquals(retransmit, p.retransmit);
        assertEquals(ackId, p.ackId);
        assertEquals(deadline, p.deadlineMillis);
        assertEquals(segment, p.payloadLength);
        assertEquals(src.get(segment - 1), b.get(p.payloadOffset + segment - 1));
    }

    @Property
    void property_grantAndResend_roundTrip(@ForAll @LongRange(min = 2) long id,
                                           @ForAll @IntRange(min = 0, max = MAX) int offset,
                                           @ForAll @IntRange(min = -1, max = MAX) int lengthSeed,
                                           @ForAll @IntRange(min = 0, max = 7) int priority) {
        ByteBuffer g = ByteBuffer.allocate(WireFormat.GRANT_LENGTH);
        PacketEncoder.grant(g, id, offset, priority);
        DecodedPacket p = decodeWritten(g);
        assertEquals(PacketType.GRANT, p.type);
        assertEquals(offset, p.grantOrResendOffset);
        assertEquals(priority, p.priority);

        int length = lengthSeed <= 0 ? lengthSeed : Math.min(lengthSeed, MAX - offset);
        ByteBuffer r = ByteBuffer.allocate(WireFormat.RESEND_LENGTH);
        PacketEncoder.resend(r, id, offset, length, priority);
        DecodedPacket q = decodeWritten(r);
        assertEquals(PacketType.RESEND, q.type);
        assertEquals(id, q.senderId);
        assertEquals(offset, q.grantOrResendOffset);
        assertEquals(length, q.resendLength);
        assertEquals(priority, q.priority);
    }

    @Property
    void property_ack_roundTrip(@ForAll @LongRange(min = 2) long id,
                                @ForAll @Size(max = 5) long[] idSeeds,
                                @ForAll @IntRange(min = 0, max = 0xFFFF) int portSeed) {
        int count = idSeeds.length;
        long[] ids = new long[count];
        int[] ports = new int[count];
        for (int i = 0; i < count; i++) {
            ids[i] = (idSeeds[i] & ~1L) == 0 ? 2 : idSeeds[i] & ~1L;
            ports[i] = (portSeed + i * 1000) & 0xFFFF;
        }
        ByteBuffer b = ByteBuffer.allocate(PacketEncoder.ackLength(count));
        PacketEncoder.ack(b, id, ids, ports, count);
        DecodedPacket p = decodeWritten(b);
        assertEquals(count, p.ackCount);
        assertArrayEquals(ids, Arrays.copyOf(p.ackIds, count));
        assertArrayEquals(ports, Arrays.copyOf(p.ackPorts, count));
    }

    @Property
    void property_cutoffs_roundTrip(@ForAll @Size(8) int[] seeds,
                                    @ForAll @IntRange(min = 1, max = 0xFFFF) int version) {
        int[] c = new int[8];
        for (int i = 0; i < 8; i++) {
            c[i] = seeds[i] & Integer.MAX_VALUE;
        }
        ByteBuffer b = ByteBuffer.allocate(WireFormat.CUTOFFS_LENGTH);
        PacketEncoder.cutoffs(b, 2, c, version, 0);
        DecodedPacket p = decodeWritten(b);
        assertArrayEquals(c, p.cutoffs);
        assertEquals(version, p.cutoffVersion);
    }
}
