package io.homa.core.wire;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Every malformed datagram is rejected with its exact {@link DropReason}, never an exception; and
 * (properties) arbitrary bytes never make the decoder throw or accept something inconsistent.
 */
class PacketDecoderTest {
    private static final int MAX = 1_000_000;
    private static final int[] DEFAULT_CUTOFFS = {0, 0, 0, 0, 1_000_000, 15_000, 2_800, 200};

    // ------------------------------------------------------------------ helpers

    private static DropReason decode(byte[] bytes) {
        return decode(bytes, MAX);
    }

    private static DropReason decode(byte[] bytes, int max) {
        return PacketDecoder.decode(ByteBuffer.wrap(bytes), max, new DecodedPacket());
    }

    private static byte[] written(ByteBuffer b) {
        return Arrays.copyOf(b.array(), b.position());
    }

    static byte[] data(long id, int messageLength, int incoming, int offset, int segment) {
        ByteBuffer b = ByteBuffer.allocate(WireFormat.DATA_HEADER + segment);
        PacketEncoder.data(b, id, messageLength, incoming, offset, 0, false, 0, 0,
                ByteBuffer.allocate(segment), 0, segment);
        return written(b);
    }

    static byte[] grant(long id, int offset, int priority) {
        ByteBuffer b = ByteBuffer.allocate(WireFormat.GRANT_LENGTH);
        PacketEncoder.grant(b, id, offset, priority);
        return written(b);
    }

    static byte[] resend(long id, int offset, int length, int priority) {
        ByteBuffer b = ByteBuffer.allocate(WireFormat.RESEND_LENGTH);
        PacketEncoder.resend(b, id, offset, length, priority);
        return written(b);
    }

    static byte[] bare(PacketType type, long id) {
        ByteBuffer b = ByteBuffer.allocate(WireFormat.BARE_LENGTH);
        PacketEncoder.bare(b, type, id);
        return written(b);
    }

    static byte[] rpcUnknownSince(long id, long uptimeNanos) {
        ByteBuffer b = ByteBuffer.allocate(WireFormat.UNKNOWN_SINCE_LENGTH);
        PacketEncoder.rpcUnknownSince(b, id, 0x1234, uptimeNanos);
        return written(b);
    }

    static byte[] cutoffs(long id, int[] values, int version) {
        ByteBuffer b = ByteBuffer.allocate(WireFormat.CUTOFFS_LENGTH);
        PacketEncoder.cutoffs(b, id, values, version, 0);
        return written(b);
    }

    static byte[] ack(long id, int count) {
        long[] ids = new long[count];
        int[] ports = new int[count];
        for (int i = 0; i < count; i++) {
            ids[i] = 2L * (i + 1);
            ports[i] = 1000 + i;
        }
        ByteBuffer b = ByteBuffer.allocate(PacketEncoder.ackLength(count));
        PacketEncoder.ack(b, id, ids, ports, count);
        return written(b);
    }

    /** A valid packet of each type (DATA with a 100-byte segment). */
    static byte[] valid(PacketType type) {
        return switch (type) {
            case DATA -> data(2, 1000, 1000, 0, 100);
            case GRANT -> grant(2, 5000, 3);
            case RESEND -> resend(2, 0, 1432, 2);
            case CUTOFFS -> cutoffs(2, DEFAULT_CUTOFFS, 1);
            case ACK -> ack(2, 3);
            case RPC_UNKNOWN_SINCE -> rpcUnknownSince(2, 5_000_000_000L);
            default -> bare(type, 2);
        };
    }

    private static byte[] withByte(byte[] p, int index, int value) {
        byte[] q = p.clone();
        q[index] = (byte) value;
        return q;
    }

    private static byte[] withInt(byte[] p, int index, int value) {
        byte[] q = p.clone();
        ByteBuffer.wrap(q).putInt(index, value);
        return q;
    }

    private static byte[] withLong(byte[] p, int index, long value) {
        byte[] q = p.clone();
        ByteBuffer.wrap(q).putLong(index, value);
        return q;
    }

    private static byte[] resized(byte[] p, int length) {
        return Arrays.copyOf(p, length);
    }

    // ------------------------------------------------------------------ valid baseline

    @ParameterizedTest
    @EnumSource(PacketType.class)
    void decode_validPacketOfEveryType_accepted(PacketType type) {
        DecodedPacket out = new DecodedPacket();
        assertNull(PacketDecoder.decode(ByteBuffer.wrap(valid(type)), MAX, out));
        assertEquals(type, out.type);
        assertEquals(2, out.senderId);
    }

    // ------------------------------------------------------------------ TOO_SHORT

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
    void decode_shorterThanCommonHeader_tooShort(int length) {
        byte[] p = resized(bare(PacketType.BUSY, 2), length);
        assertEquals(DropReason.TOO_SHORT, decode(p));
    }

    @Test
    void decode_exactlyCommonHeader_notTooShort() {
        assertNull(decode(bare(PacketType.BUSY, 2)));
    }

    @Test
    void decode_twelveBytesWindowInsideLargerArray_tooShortWhenLimitCutsIt() {
        byte[] big = new byte[100];
        System.arraycopy(bare(PacketType.BUSY, 2), 0, big, 50, 12);
        ByteBuffer b = ByteBuffer.wrap(big);
        b.position(50).limit(61);
        assertEquals(DropReason.TOO_SHORT, PacketDecoder.decode(b, MAX, new DecodedPacket()));
    }

    // ------------------------------------------------------------------ BAD_MAGIC, BAD_VERSION

    @ParameterizedTest
    @ValueSource(ints = {0x0000, 0x4D48, 0x484E, 0x494D, 0xFFFF, 0x0800})
    void decode_wrongMagic_badMagic(int magic) {
        byte[] p = bare(PacketType.BUSY, 2);
        ByteBuffer.wrap(p).putShort(0, (short) magic);
        assertEquals(DropReason.BAD_MAGIC, decode(p));
    }

    @Test
    void decode_wrongMagicAndWrongVersion_magicCheckedFirst() {
        byte[] p = withByte(withByte(bare(PacketType.BUSY, 2), 0, 0), 2, 9);
        assertEquals(DropReason.BAD_MAGIC, decode(p));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 3, 0x7F, 0x80, 0xFF})
    void decode_otherVersion_badVersion(int version) {
        assertEquals(DropReason.BAD_VERSION, decode(withByte(bare(PacketType.BUSY, 2), 2, version)));
    }

    @Test
    void decode_otherVersionAndUnknownType_versionCheckedFirst() {
        byte[] p = withByte(withByte(bare(PacketType.BUSY, 2), 2, 1), 3, 0x16);
        assertEquals(DropReason.BAD_VERSION, decode(p));
    }

    // ------------------------------------------------------------------ UNKNOWN_TYPE

    @Test
    void decode_freezeType_unknownType() {
        assertEquals(DropReason.UNKNOWN_TYPE, decode(withByte(bare(PacketType.BUSY, 2), 3, 0x16)));
    }

    @ParameterizedTest
    @ValueSource(ints = {0x00, 0x01, 0x0F, 0x19, 0x1A, 0x20, 0x7F, 0x80, 0x90, 0xFF})
    void decode_codeOutsideHomaTypes_unknownType(int code) {
        assertEquals(DropReason.UNKNOWN_TYPE, decode(withByte(bare(PacketType.BUSY, 2), 3, code)));
    }

    @Property
    void property_everyCodeButTheElevenTypes_unknownType(@ForAll @IntRange(min = 0, max = 255) int code) {
        Set<Integer> known = Set.of(0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x17, 0x18, 0x1D, 0x1E, 0x1F);
        DropReason r = decode(withByte(bare(PacketType.BUSY, 2), 3, code));
        if (known.contains(code)) {
            assertTrue(r != DropReason.UNKNOWN_TYPE, "known code " + code + " refused as unknown");
        } else {
            assertEquals(DropReason.UNKNOWN_TYPE, r, "code " + code);
        }
    }

    @Test
    void packetType_fromCode_mapsExactlyTheLinuxNumbering() {
        assertEquals(PacketType.DATA, PacketType.fromCode(0x10));
        assertEquals(PacketType.GRANT, PacketType.fromCode(0x11));
        assertEquals(PacketType.RESEND, PacketType.fromCode(0x12));
        assertEquals(PacketType.RPC_UNKNOWN, PacketType.fromCode(0x13));
        assertEquals(PacketType.BUSY, PacketType.fromCode(0x14));
        assertEquals(PacketType.CUTOFFS, PacketType.fromCode(0x15));
        assertNull(PacketType.fromCode(0x16));
        assertEquals(PacketType.NEED_ACK, PacketType.fromCode(0x17));
        assertEquals(PacketType.ACK, PacketType.fromCode(0x18));
        assertEquals(PacketType.OVERLOADED, PacketType.fromCode(0x1F)); // homa-java's own
        assertEquals(PacketType.CANCEL, PacketType.fromCode(0x1E)); // homa-java's own too
        assertNull(PacketType.fromCode(-1));
        assertNull(PacketType.fromCode(256));
        assertNull(PacketType.fromCode(Integer.MIN_VALUE));
    }

    // ------------------------------------------------------------------ BAD_ID

    @ParameterizedTest
    @EnumSource(PacketType.class)
    void decode_senderIdZero_badId(PacketType type) {
        byte[] p = withLong(valid(type), WireFormat.OFF_SENDER_ID, 0);
        assertEquals(DropReason.BAD_ID, decode(p));
    }

    @ParameterizedTest
    @EnumSource(PacketType.class)
    void decode_senderIdOne_badId(PacketType type) {
        byte[] p = withLong(valid(type), WireFormat.OFF_SENDER_ID, 1);
        assertEquals(DropReason.BAD_ID, decode(p));
    }

    @ParameterizedTest
    @ValueSource(longs = {2, 3, -1, Long.MIN_VALUE, Long.MAX_VALUE})
    void decode_senderIdAboveOne_accepted(long id) {
        DecodedPacket out = new DecodedPacket();
        assertNull(PacketDecoder.decode(ByteBuffer.wrap(data(id, 10, 10, 0, 10)), MAX, out));
        assertEquals(id, out.senderId);
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 3, 0xFFFF_FFFF_FFFF_FFFFL, Long.MAX_VALUE})
    void decode_data_oddPiggybackedAckId_badId(long ackId) {
        byte[] p = withLong(data(2, 10, 10, 0, 10), WireFormat.DATA_OFF_ACK_ID, ackId);
        assertEquals(DropReason.BAD_ID, decode(p));
    }

    @Test
    void decode_data_piggybackedAckIdZeroMeansNone_accepted() {
        DecodedPacket out = new DecodedPacket();
        assertNull(PacketDecoder.decode(ByteBuffer.wrap(data(2, 10, 10, 0, 10)), MAX, out));
        assertEquals(0, out.ackId);
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3, 4})
    void decode_ack_oddEntryId_badId(int entry) {
        byte[] p = ack(2, 5);
        int at = WireFormat.ACK_OFF_ENTRIES + entry * WireFormat.ACK_ENTRY;
        assertEquals(DropReason.BAD_ID, decode(withLong(p, at, 7)));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 2, 4})
    void decode_ack_zeroEntryId_badId(int entry) {
        byte[] p = ack(2, 5);
        int at = WireFormat.ACK_OFF_ENTRIES + entry * WireFormat.ACK_ENTRY;
        assertEquals(DropReason.BAD_ID, decode(withLong(p, at, 0)));
    }

    // ------------------------------------------------------------------ BAD_LENGTH

    static Stream<Arguments> controlTypesWithWrongLength() {
        List<Arguments> list = new ArrayList<>();
        list.add(Arguments.of(PacketType.GRANT, WireFormat.GRANT_LENGTH - 1));
        list.add(Arguments.of(PacketType.GRANT, WireFormat.GRANT_LENGTH + 1));
        list.add(Arguments.of(PacketType.GRANT, WireFormat.COMMON_HEADER));
        list.add(Arguments.of(PacketType.GRANT, 1500));
        list.add(Arguments.of(PacketType.RESEND, WireFormat.RESEND_LENGTH - 1));
        list.add(Arguments.of(PacketType.RESEND, WireFormat.RESEND_LENGTH + 1));
        list.add(Arguments.of(PacketType.RESEND, WireFormat.COMMON_HEADER));
        list.add(Arguments.of(PacketType.CUTOFFS, WireFormat.CUTOFFS_LENGTH - 1));
        list.add(Arguments.of(PacketType.CUTOFFS, WireFormat.CUTOFFS_LENGTH + 1));
        list.add(Arguments.of(PacketType.CUTOFFS, WireFormat.COMMON_HEADER));
        list.add(Arguments.of(PacketType.RPC_UNKNOWN, WireFormat.BARE_LENGTH + 1));
        list.add(Arguments.of(PacketType.BUSY, WireFormat.BARE_LENGTH + 1));
        list.add(Arguments.of(PacketType.NEED_ACK, WireFormat.BARE_LENGTH + 1));
        list.add(Arguments.of(PacketType.NEED_ACK, WireFormat.BARE_LENGTH + 64));
        list.add(Arguments.of(PacketType.OVERLOADED, WireFormat.BARE_LENGTH + 1));
        list.add(Arguments.of(PacketType.CANCEL, WireFormat.BARE_LENGTH + 1));
        list.add(Arguments.of(PacketType.ACK, WireFormat.ACK_OFF_ENTRIES - 1));
        list.add(Arguments.of(PacketType.ACK, WireFormat.COMMON_HEADER));
        list.add(Arguments.of(PacketType.DATA, WireFormat.DATA_HEADER - 1));
        list.add(Arguments.of(PacketType.DATA, WireFormat.COMMON_HEADER));
        return list.stream();
    }

    @ParameterizedTest
    @MethodSource("controlTypesWithWrongLength")
    void decode_lengthNotFittingType_badLength(PacketType type, int length) {
        byte[] p = resized(valid(type), length);
        assertEquals(DropReason.BAD_LENGTH, decode(p), type + " of " + length + " bytes");
    }

    @Test
    void decode_data_headerOnlyOfNonEmptyMessage_isNotBadLength() {
        assertEquals(DropReason.EMPTY_SEGMENT, decode(data(2, 100, 100, 0, 0)));
    }

    @ParameterizedTest
    @ValueSource(ints = {-2, -3, -1000, Integer.MIN_VALUE})
    void decode_resend_lengthBelowMinusOne_badLength(int length) {
        assertEquals(DropReason.BAD_LENGTH, decode(resend(2, 0, length, 0)));
    }

    // ------------------------------------------------------------------ MESSAGE_TOO_LONG

    @Test
    void decode_data_messageLengthOneAboveMax_messageTooLong() {
        assertEquals(DropReason.MESSAGE_TOO_LONG, decode(data(2, MAX + 1, 0, 0, 10)));
    }

    @Test
    void decode_data_messageLengthExactlyMax_accepted() {
        assertNull(decode(data(2, MAX, 0, MAX - 10, 10)));
    }

    @ParameterizedTest
    @ValueSource(ints = {-1, Integer.MIN_VALUE, Integer.MAX_VALUE})
    void decode_data_messageLengthAsUnsignedHuge_messageTooLong(int rawLength) {
        byte[] p = withInt(data(2, 10, 10, 0, 10), WireFormat.DATA_OFF_MESSAGE_LENGTH, rawLength);
        assertEquals(DropReason.MESSAGE_TOO_LONG, decode(p));
    }

    @Test
    void decode_data_limitIsTheCallersMaximum() {
        byte[] p = data(2, 5000, 5000, 0, 100);
        assertNull(decode(p, 5000));
        assertEquals(DropReason.MESSAGE_TOO_LONG, decode(p, 4999));
    }

    // ------------------------------------------------------------------ BEYOND_MESSAGE

    @Test
    void decode_data_segmentBeyondMessage_rejected() {
        assertEquals(DropReason.BEYOND_MESSAGE, decode(data(2, 1000, 1000, 901, 100)));
    }

    @Test
    void decode_data_segmentEndingAtMessageEnd_accepted() {
        assertNull(decode(data(2, 1000, 1000, 900, 100)));
    }

    @Test
    void decode_data_offsetBeyondMessage_rejected() {
        assertEquals(DropReason.BEYOND_MESSAGE, decode(data(2, 1000, 1000, 1000, 1)));
    }

    @Test
    void decode_data_offsetNearUnsignedMax_rejectedWithoutOverflow() {
        byte[] p = withInt(data(2, 1000, 1000, 0, 10), WireFormat.DATA_OFF_OFFSET, -5);
        assertEquals(DropReason.BEYOND_MESSAGE, decode(p));
    }

    @Test
    void decode_data_incomingAboveMessageLength_rejected() {
        assertEquals(DropReason.BEYOND_MESSAGE, decode(data(2, 1000, 1001, 0, 10)));
    }

    @Test
    void decode_data_incomingAsUnsignedHuge_rejected() {
        byte[] p = withInt(data(2, 1000, 1000, 0, 10), WireFormat.DATA_OFF_INCOMING, -1);
        assertEquals(DropReason.BEYOND_MESSAGE, decode(p));
    }

    @Test
    void decode_data_incomingZero_accepted() {
        assertNull(decode(data(2, 1000, 0, 0, 10)));
    }

    @Test
    void decode_data_zeroLengthMessageWithPayload_rejected() {
        assertEquals(DropReason.BEYOND_MESSAGE, decode(data(2, 0, 0, 0, 1)));
    }

    @Test
    void decode_data_zeroLengthMessageAtNonZeroOffset_rejected() {
        assertEquals(DropReason.BEYOND_MESSAGE, decode(data(2, 0, 0, 1, 0)));
    }

    @Test
    void decode_grant_offsetAboveMax_beyondMessage() {
        assertEquals(DropReason.BEYOND_MESSAGE, decode(grant(2, MAX + 1, 0)));
    }

    @Test
    void decode_grant_offsetUnsignedHuge_beyondMessage() {
        assertEquals(DropReason.BEYOND_MESSAGE, decode(grant(2, -1, 0)));
    }

    @Test
    void decode_grant_offsetExactlyMax_accepted() {
        assertNull(decode(grant(2, MAX, 0)));
    }

    @Test
    void decode_resend_offsetAboveMax_beyondMessage() {
        assertEquals(DropReason.BEYOND_MESSAGE, decode(resend(2, MAX + 1, -1, 0)));
    }

    @Test
    void decode_resend_rangeEndAboveMax_beyondMessage() {
        assertEquals(DropReason.BEYOND_MESSAGE, decode(resend(2, MAX - 99, 100, 0)));
    }

    @Test
    void decode_resend_hugeLength_beyondMessageWithoutOverflow() {
        assertEquals(DropReason.BEYOND_MESSAGE, decode(resend(2, MAX, Integer.MAX_VALUE, 0)));
    }

    @Test
    void decode_resend_everythingFromMax_accepted() {
        assertNull(decode(resend(2, MAX, -1, 0)));
    }

    // ------------------------------------------------------------------ EMPTY_SEGMENT, BAD_FLAGS

    @Test
    void decode_data_noPayloadInNonEmptyMessage_emptySegment() {
        assertEquals(DropReason.EMPTY_SEGMENT, decode(data(2, 1, 1, 0, 0)));
    }

    @Test
    void decode_data_noPayloadInEmptyMessage_accepted() {
        assertNull(decode(data(2, 0, 0, 0, 0)));
    }

    @ParameterizedTest
    @ValueSource(ints = {0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x03, 0xFF})
    void decode_data_undefinedFlagBit_badFlags(int flags) {
        byte[] p = withByte(data(2, 10, 10, 0, 10), WireFormat.DATA_OFF_FLAGS, flags);
        assertEquals(DropReason.BAD_FLAGS, decode(p));
    }

    @Test
    void decode_data_retransmitFlagOnly_accepted() {
        byte[] p = withByte(data(2, 10, 10, 0, 10), WireFormat.DATA_OFF_FLAGS, WireFormat.FLAG_RETRANSMIT);
        DecodedPacket out = new DecodedPacket();
        assertNull(PacketDecoder.decode(ByteBuffer.wrap(p), MAX, out));
        assertTrue(out.retransmit);
    }

    // ------------------------------------------------------------------ BAD_PRIORITY

    static IntStream priorities8to255() {
        return IntStream.rangeClosed(8, 255);
    }

    @ParameterizedTest
    @MethodSource("priorities8to255")
    void decode_grant_priorityAboveSeven_badPriority(int priority) {
        assertEquals(DropReason.BAD_PRIORITY, decode(grant(2, 100, priority)));
    }

    @ParameterizedTest
    @MethodSource("priorities8to255")
    void decode_resend_priorityAboveSeven_badPriority(int priority) {
        assertEquals(DropReason.BAD_PRIORITY, decode(resend(2, 0, 100, priority)));
    }

    // ------------------------------------------------------------------ BAD_ACK_COUNT

    @Test
    void decode_ack_countSixWithSixEntries_badAckCount() {
        byte[] p = resized(ack(2, 5), PacketEncoder.ackLength(6));
        p[WireFormat.ACK_OFF_COUNT] = 6;
        ByteBuffer.wrap(p).putLong(WireFormat.ACK_OFF_ENTRIES + 5 * WireFormat.ACK_ENTRY, 12);
        assertEquals(DropReason.BAD_ACK_COUNT, decode(p));
    }

    @Test
    void decode_ack_countSixWithFiveEntries_badAckCount() {
        assertEquals(DropReason.BAD_ACK_COUNT, decode(withByte(ack(2, 5), WireFormat.ACK_OFF_COUNT, 6)));
    }

    @Test
    void decode_ack_count255_badAckCount() {
        assertEquals(DropReason.BAD_ACK_COUNT, decode(withByte(ack(2, 5), WireFormat.ACK_OFF_COUNT, 255)));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 4, 5})
    void decode_ack_countDisagreesWithLength_badAckCount(int claimed) {
        assertEquals(DropReason.BAD_ACK_COUNT, decode(withByte(ack(2, 3), WireFormat.ACK_OFF_COUNT, claimed)));
    }

    @Test
    void decode_ack_oneTrailingByte_badAckCount() {
        assertEquals(DropReason.BAD_ACK_COUNT, decode(resized(ack(2, 2), PacketEncoder.ackLength(2) + 1)));
    }

    @Test
    void decode_ack_oneByteMissing_badAckCount() {
        assertEquals(DropReason.BAD_ACK_COUNT, decode(resized(ack(2, 2), PacketEncoder.ackLength(2) - 1)));
    }

    @Test
    void decode_ack_zeroEntries_accepted() {
        DecodedPacket out = new DecodedPacket();
        assertNull(PacketDecoder.decode(ByteBuffer.wrap(ack(2, 0)), MAX, out));
        assertEquals(0, out.ackCount);
    }

    // ------------------------------------------------------------------ BAD_CUTOFFS

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3, 4, 5, 6, 7})
    void decode_cutoffs_negativeValueAtAnyLevel_badCutoffs(int level) {
        byte[] p = withInt(cutoffs(2, DEFAULT_CUTOFFS, 1), WireFormat.CUTOFFS_OFF_VALUES + 4 * level, -1);
        assertEquals(DropReason.BAD_CUTOFFS, decode(p));
    }

    @Test
    void decode_cutoffs_minIntValue_badCutoffs() {
        byte[] p = withInt(cutoffs(2, DEFAULT_CUTOFFS, 1), WireFormat.CUTOFFS_OFF_VALUES + 4 * 7, Integer.MIN_VALUE);
        assertEquals(DropReason.BAD_CUTOFFS, decode(p));
    }

    @Test
    void decode_cutoffs_versionZero_badCutoffs() {
        assertEquals(DropReason.BAD_CUTOFFS, decode(cutoffs(2, DEFAULT_CUTOFFS, 0)));
    }

    @Test
    void decode_cutoffs_versionWrappingToZero_badCutoffs() {
        assertEquals(DropReason.BAD_CUTOFFS, decode(cutoffs(2, DEFAULT_CUTOFFS, 0x10000)));
    }

    // ------------------------------------------------------------------ buffer handling

    @Test
    void decode_sliceAtNonZeroPosition_decodesAndPayloadOffsetIsAbsolute() {
        byte[] packet = data(6, 500, 500, 100, 50);
        packet[WireFormat.DATA_HEADER] = 99;
        byte[] big = new byte[300];
        Arrays.fill(big, (byte) 0xEE);
        System.arraycopy(packet, 0, big, 37, packet.length);
        ByteBuffer b = ByteBuffer.wrap(big);
        b.position(37).limit(37 + packet.length);
        DecodedPacket out = new DecodedPacket();
        assertNull(PacketDecoder.decode(b, MAX, out));
        assertEquals(6, out.senderId);
        assertEquals(100, out.offset);
        assertEquals(50, out.payloadLength);
        assertEquals(37 + WireFormat.DATA_HEADER, out.payloadOffset);
        assertEquals(99, b.get(out.payloadOffset));
    }

    @Test
    void decode_sliceOfSliceWithNonZeroArrayOffset_decodes() {
        byte[] packet = grant(10, 777, 4);
        byte[] big = new byte[100];
        System.arraycopy(packet, 0, big, 13, packet.length);
        ByteBuffer slice = ByteBuffer.wrap(big, 10, 90).slice();
        slice.position(3).limit(3 + packet.length);
        DecodedPacket out = new DecodedPacket();
        assertNull(PacketDecoder.decode(slice, MAX, out));
        assertEquals(777, out.grantOrResendOffset);
        assertEquals(4, out.priority);
    }

    @Test
    void decode_bytesBeyondLimitIgnored() {
        byte[] big = Arrays.copyOf(bare(PacketType.NEED_ACK, 4), 64);
        Arrays.fill(big, 12, 64, (byte) 1);
        ByteBuffer b = ByteBuffer.wrap(big);
        b.limit(12);
        assertNull(PacketDecoder.decode(b, MAX, new DecodedPacket()));
        b.limit(13);
        assertEquals(DropReason.BAD_LENGTH, PacketDecoder.decode(b, MAX, new DecodedPacket()));
    }

    @ParameterizedTest
    @EnumSource(PacketType.class)
    void decode_leavesPositionAndLimitUnchanged(PacketType type) {
        byte[] p = valid(type);
        ByteBuffer b = ByteBuffer.allocate(p.length + 20);
        b.position(7);
        b.put(p);
        b.position(7).limit(7 + p.length);
        assertNull(PacketDecoder.decode(b, MAX, new DecodedPacket()));
        assertEquals(7, b.position());
        assertEquals(7 + p.length, b.limit());
    }

    @Test
    void decode_directAndReadOnlyBuffers_decode() {
        byte[] p = data(2, 300, 300, 0, 300);
        ByteBuffer direct = ByteBuffer.allocateDirect(p.length);
        direct.put(p).flip();
        assertNull(PacketDecoder.decode(direct, MAX, new DecodedPacket()));
        assertNull(PacketDecoder.decode(ByteBuffer.wrap(p).asReadOnlyBuffer(), MAX, new DecodedPacket()));
        assertEquals(DropReason.TOO_SHORT,
                PacketDecoder.decode(ByteBuffer.allocateDirect(0), MAX, new DecodedPacket()));
    }

    @Test
    void decode_reusedHolder_overwritesFieldsOfNewType() {
        DecodedPacket out = new DecodedPacket();
        assertNull(PacketDecoder.decode(ByteBuffer.wrap(ack(2, 5)), MAX, out));
        assertEquals(5, out.ackCount);
        assertNull(PacketDecoder.decode(ByteBuffer.wrap(ack(4, 1)), MAX, out));
        assertEquals(1, out.ackCount);
        assertEquals(4, out.senderId);
        assertNull(PacketDecoder.decode(ByteBuffer.wrap(grant(8, 9, 1)), MAX, out));
        assertEquals(PacketType.GRANT, out.type);
        assertEquals(8, out.senderId);
    }

    @Test
    void decodedPacket_toString_namesTypeAndFields() {
        DecodedPacket out = new DecodedPacket();
        assertEquals("null id=0", out.toString());
        PacketDecoder.decode(ByteBuffer.wrap(resend(2, 10, 20, 3)), MAX, out);
        assertEquals("RESEND id=2 off=10 len=20 prio=3", out.toString());
    }

    @Test
    void dropReason_all_listsEveryReasonOnce() {
        assertArrayEquals(DropReason.values(), DropReason.all());
        assertEquals(24, DropReason.all().length);
    }

    // ------------------------------------------------------------------ properties

    /** Asserts what an accepted packet must satisfy: it fits its type and the limits. */
    static void assertSelfConsistent(DecodedPacket p, int base, int len, int max) {
        assertNotNull(p.type);
        assertTrue((p.senderId & ~1L) != 0, "sender id");
        switch (p.type) {
            case DATA -> {
                assertTrue(p.messageLength >= 0 && p.messageLength <= max, "length");
                assertTrue(p.incoming >= 0 && p.incoming <= p.messageLength, "incoming");
                assertTrue(p.offset >= 0, "offset");
                assertEquals(len - WireFormat.DATA_HEADER, p.payloadLength);
                assertEquals(base + WireFormat.DATA_HEADER, p.payloadOffset);
                assertTrue((long) p.offset + p.payloadLength <= p.messageLength, "segment end");
                assertTrue(p.payloadLength > 0 || p.messageLength == 0, "empty segment");
                assertEquals(0, p.ackId & 1, "ack id");
                assertTrue(p.cutoffVersion >= 0 && p.cutoffVersion <= 0xFFFF);
                assertTrue(p.deadlineMillis >= 0 && p.deadlineMillis <= WireFormat.MAX_DEADLINE_MILLIS);
            }
            case GRANT -> {
                assertEquals(WireFormat.GRANT_LENGTH, len);
                assertTrue(p.grantOrResendOffset >= 0 && p.grantOrResendOffset <= max);
                assertTrue(p.priority >= 0 && p.priority <= 7);
            }
            case RESEND -> {
                assertEquals(WireFormat.RESEND_LENGTH, len);
                assertTrue(p.grantOrResendOffset >= 0 && p.grantOrResendOffset <= max);
                assertTrue(p.resendLength >= -1);
                assertTrue(p.resendLength <= 0 || (long) p.grantOrResendOffset + p.resendLength <= max);
                assertTrue(p.priority >= 0 && p.priority <= 7);
            }
            case CUTOFFS -> {
                assertEquals(WireFormat.CUTOFFS_LENGTH, len);
                for (int c : p.cutoffs) {
                    assertTrue(c >= 0);
                }
                assertTrue(p.cutoffVersion >= 1 && p.cutoffVersion <= 0xFFFF);
            }
            case ACK -> {
                assertTrue(p.ackCount >= 0 && p.ackCount <= WireFormat.MAX_ACKS);
                assertEquals(PacketEncoder.ackLength(p.ackCount), len);
                for (int i = 0; i < p.ackCount; i++) {
                    assertTrue(p.ackIds[i] != 0 && (p.ackIds[i] & 1) == 0);
                    assertTrue(p.ackPorts[i] >= 0 && p.ackPorts[i] <= 0xFFFF);
                }
            }
            case RPC_UNKNOWN, BUSY, NEED_ACK, OVERLOADED, CANCEL -> assertEquals(WireFormat.BARE_LENGTH, len);
            case RPC_UNKNOWN_SINCE -> {
                assertEquals(WireFormat.UNKNOWN_SINCE_LENGTH, len);
                assertTrue(p.uptimeNanos >= 0);
            }
            default -> fail("unexpected type " + p.type);
        }
    }

    private static void decodeAndCheck(byte[] bytes, int max) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        DecodedPacket p = new DecodedPacket();
        DropReason r = PacketDecoder.decode(b, max, p);
        assertEquals(0, b.position());
        assertEquals(bytes.length, b.limit());
        if (r == null) {
            assertSelfConsistent(p, 0, bytes.length, max);
        }
    }

    @Property(tries = 2000)
    void property_randomBytes_neverThrowAndAcceptOnlyConsistentPackets(
            @ForAll @Size(max = 120) byte[] bytes, @ForAll @IntRange(min = 0, max = MAX) int max) {
        decodeAndCheck(bytes, max);
    }

    @Provide
    Arbitrary<byte[]> homaLooking() {
        Arbitrary<Integer> type = Arbitraries.of(0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18);
        Arbitrary<Integer> length = Arbitraries.oneOf(
                Arbitraries.of(12, 13, 15, 16, 19, 20, 21, 23, 24, 25, 26, 36, 39, 40, 41, 46, 47, 48, 49, 56, 66, 67),
                Arbitraries.integers().between(0, 200));
        Arbitrary<byte[]> body = Arbitraries.bytes().array(byte[].class).ofSize(200);
        Arbitrary<Integer> smallInts = Arbitraries.integers().between(0, 300);
        return Combinators.combine(type, length, body, smallInts).as((t, n, raw, small) -> {
            byte[] p = Arrays.copyOf(raw, n);
            if (n >= 12) {
                ByteBuffer b = ByteBuffer.wrap(p);
                b.putShort(0, (short) WireFormat.MAGIC);
                b.put(2, (byte) WireFormat.VERSION);
                b.put(3, t.byteValue());
                if (n >= 24 && (small & 1) == 0) {
                    // keep the length fields small so deeper checks are reached
                    b.putInt(12, small);
                    b.putInt(16, small / 2);
                    b.putInt(20, small / 3);
                }
                if (n >= 13 && t == 0x18) {
                    b.put(12, (byte) (small % 7));
                }
            }
            return p;
        });
    }

    @Property(tries = 3000)
    void property_homaLookingRandomPackets_neverThrowAndAcceptOnlyConsistentPackets(
            @ForAll("homaLooking") byte[] bytes, @ForAll @IntRange(min = 0, max = 1000) int max) {
        decodeAndCheck(bytes, max);
    }

    @Provide
    Arbitrary<byte[]> validPackets() {
        return Arbitraries.of(PacketType.class).map(PacketDecoderTest::valid);
    }

    @Property(tries = 3000)
    void property_singleByteMutationOfValidPacket_neverThrows(
            @ForAll("validPackets") byte[] packet,
            @ForAll @IntRange(min = 0, max = 200) int indexSeed,
            @ForAll byte value) {
        byte[] mutated = packet.clone();
        mutated[indexSeed % mutated.length] = value;
        decodeAndCheck(mutated, MAX);
    }

    @Property(tries = 1000)
    void property_truncatedOrExtendedValidPacket_neverThrows(
            @ForAll("validPackets") byte[] packet, @ForAll @IntRange(min = 0, max = 150) int length) {
        decodeAndCheck(Arrays.copyOf(packet, length), MAX);
    }

    @Property(tries = 1000)
    void property_decodeInsideLargerBuffer_sameResultAndBufferUntouched(
            @ForAll("homaLooking") byte[] packet,
            @ForAll @IntRange(min = 0, max = 64) int before,
            @ForAll @IntRange(min = 0, max = 64) int after,
            @ForAll byte filler) {
        byte[] big = new byte[before + packet.length + after];
        Arrays.fill(big, filler);
        System.arraycopy(packet, 0, big, before, packet.length);
        ByteBuffer b = ByteBuffer.wrap(big);
        b.position(before).limit(before + packet.length);
        byte[] copy = big.clone();

        DecodedPacket inside = new DecodedPacket();
        DropReason r1 = PacketDecoder.decode(b, MAX, inside);
        DecodedPacket alone = new DecodedPacket();
        DropReason r2 = PacketDecoder.decode(ByteBuffer.wrap(packet), MAX, alone);

        assertEquals(r2, r1);
        assertEquals(before, b.position());
        assertEquals(before + packet.length, b.limit());
        assertArrayEquals(copy, big, "decoder wrote into the buffer");
        if (r1 == null) {
            assertSelfConsistent(inside, before, packet.length, MAX);
            assertEquals(alone.toString(), inside.toString());
            if (inside.type == PacketType.DATA) {
                assertEquals(alone.payloadOffset + before, inside.payloadOffset);
            }
        }
    }

    @Property(tries = 300)
    void property_littleEndianBuffer_decodesAsNetworkOrder(@ForAll("homaLooking") byte[] packet) {
        ByteBuffer little = ByteBuffer.wrap(packet).order(ByteOrder.LITTLE_ENDIAN);
        DecodedPacket p = new DecodedPacket();
        DropReason r = PacketDecoder.decode(little, MAX, p);
        DecodedPacket q = new DecodedPacket();
        assertEquals(PacketDecoder.decode(ByteBuffer.wrap(packet), MAX, q), r);
        assertEquals(ByteOrder.LITTLE_ENDIAN, little.order(), "caller's buffer order changed");
        assertEquals(0, little.position());
        if (r == null) {
            assertEquals(q.toString(), p.toString());
        }
    }

    @Test
    void decode_littleEndianBuffer_readsBigEndianFields() {
        ByteBuffer b = ByteBuffer.wrap(data(0x0102_0304_0506_0708L, 5000, 4000, 1432, 100))
                .order(ByteOrder.LITTLE_ENDIAN);
        DecodedPacket out = new DecodedPacket();
        assertNull(PacketDecoder.decode(b, MAX, out));
        assertEquals(0x0102_0304_0506_0708L, out.senderId);
        assertEquals(5000, out.messageLength);
        assertEquals(4000, out.incoming);
        assertEquals(1432, out.offset);
    }
}
