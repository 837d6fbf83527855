package io.homa.core.wire;

import java.nio.ByteBuffer;

/**
 * Writes Homa packets at a buffer's position and advances it. Each method returns the number of
 * bytes written. The buffer must be big-endian (network order, Java's default). The caller makes sure there is room (see the length constants in
 * {@link WireFormat}); these methods are on the send hot path and allocate nothing.
 */
public final class PacketEncoder {
    private PacketEncoder() {
    }

    private static void common(ByteBuffer b, int at, PacketType type, long senderId) {
        if (b.order() != java.nio.ByteOrder.BIG_ENDIAN) {
            throw new IllegalArgumentException("Homa packets are big-endian: use a big-endian buffer");
        }
        b.putShort(at + WireFormat.OFF_MAGIC, (short) WireFormat.MAGIC);
        b.put(at + WireFormat.OFF_VERSION, (byte) WireFormat.VERSION);
        b.put(at + WireFormat.OFF_TYPE, (byte) type.code);
        b.putLong(at + WireFormat.OFF_SENDER_ID, senderId);
    }

    /**
     * Writes a DATA header followed by {@code length} payload bytes copied from {@code payload}
     * (absolute index {@code payloadIndex}; the payload buffer's position is not changed).
     * {@code deadlineMillis} is 0 (none) to {@link WireFormat#MAX_DEADLINE_MILLIS}.
     */
    public static int data(ByteBuffer b, long senderId, int messageLength, int incoming, int offset,
                           int cutoffVersion, boolean retransmit, long ackId, int deadlineMillis,
                           ByteBuffer payload, int payloadIndex, int length) {
        int at = b.position();
        dataHeader(b, at, senderId, messageLength, incoming, offset, cutoffVersion, retransmit, ackId, deadlineMillis, length);
        if (length > 0) {
            b.put(at + WireFormat.DATA_HEADER, payload, payloadIndex, length);
        }
        b.position(at + WireFormat.DATA_HEADER + length);
        return WireFormat.DATA_HEADER + length;
    }

    /**
     * Writes only a DATA header at absolute index {@code at}, for a segment of
     * {@code segmentLength} payload bytes (0 to 65,467); the position is not changed.
     */
    public static void dataHeader(ByteBuffer b, int at, long senderId, int messageLength, int incoming,
                                  int offset, int cutoffVersion, boolean retransmit, long ackId, int deadlineMillis,
                                  int segmentLength) {
        common(b, at, PacketType.DATA, senderId);
        b.putInt(at + WireFormat.DATA_OFF_MESSAGE_LENGTH, messageLength);
        b.putInt(at + WireFormat.DATA_OFF_INCOMING, incoming);
        b.putInt(at + WireFormat.DATA_OFF_OFFSET, offset);
        b.putShort(at + WireFormat.DATA_OFF_CUTOFF_VERSION, (short) cutoffVersion);
        b.put(at + WireFormat.DATA_OFF_FLAGS, (byte) (retransmit ? WireFormat.FLAG_RETRANSMIT : 0));
        b.put(at + WireFormat.DATA_OFF_DEADLINE_HIGH, (byte) (deadlineMillis >>> 16));
        b.putLong(at + WireFormat.DATA_OFF_ACK_ID, ackId);
        b.putShort(at + WireFormat.DATA_OFF_DEADLINE_LOW, (short) deadlineMillis);
        b.putShort(at + WireFormat.DATA_OFF_SEGMENT_LENGTH, (short) segmentLength);
    }

    public static int grant(ByteBuffer b, long senderId, int offset, int priority) {
        int at = b.position();
        common(b, at, PacketType.GRANT, senderId);
        b.putInt(at + WireFormat.GRANT_OFF_OFFSET, offset);
        b.put(at + WireFormat.GRANT_OFF_PRIORITY, (byte) priority);
        b.put(at + WireFormat.GRANT_OFF_PRIORITY + 1, (byte) 0);
        b.putShort(at + WireFormat.GRANT_OFF_PRIORITY + 2, (short) 0);
        b.position(at + WireFormat.GRANT_LENGTH);
        return WireFormat.GRANT_LENGTH;
    }

    public static int resend(ByteBuffer b, long senderId, int offset, int length, int priority) {
        return resend(b, senderId, offset, length, priority, 0);
    }

    /** RESEND with flags ({@link WireFormat#RESEND_FLAG_WANTS_UPTIME}). */
    public static int resend(ByteBuffer b, long senderId, int offset, int length, int priority, int flags) {
        int at = b.position();
        common(b, at, PacketType.RESEND, senderId);
        b.putInt(at + WireFormat.RESEND_OFF_OFFSET, offset);
        b.putInt(at + WireFormat.RESEND_OFF_LENGTH, length);
        b.put(at + WireFormat.RESEND_OFF_PRIORITY, (byte) priority);
        b.put(at + WireFormat.RESEND_OFF_FLAGS, (byte) flags);
        b.putShort(at + WireFormat.RESEND_OFF_FLAGS + 1, (short) 0);
        b.position(at + WireFormat.RESEND_LENGTH);
        return WireFormat.RESEND_LENGTH;
    }

    /** RPC_UNKNOWN, BUSY, NEED_ACK, OVERLOADED or CANCEL: the common header alone. */
    public static int bare(ByteBuffer b, PacketType type, long senderId) {
        if (type != PacketType.RPC_UNKNOWN && type != PacketType.BUSY && type != PacketType.NEED_ACK
                && type != PacketType.OVERLOADED && type != PacketType.CANCEL) {
            throw new IllegalArgumentException("not a header-only packet type: " + type);
        }
        int at = b.position();
        common(b, at, type, senderId);
        b.position(at + WireFormat.BARE_LENGTH);
        return WireFormat.BARE_LENGTH;
    }

    /** RPC_UNKNOWN_SINCE: RPC_UNKNOWN with the server's incarnation and its uptime in ns. */
    public static int rpcUnknownSince(ByteBuffer b, long senderId, long incarnation, long uptimeNanos) {
        if (uptimeNanos < 0) {
            throw new IllegalArgumentException("uptime must not be negative: " + uptimeNanos);
        }
        int at = b.position();
        common(b, at, PacketType.RPC_UNKNOWN_SINCE, senderId);
        b.putLong(at + WireFormat.UNKNOWN_SINCE_OFF_INCARNATION, incarnation);
        b.putLong(at + WireFormat.UNKNOWN_SINCE_OFF_UPTIME, uptimeNanos);
        b.position(at + WireFormat.UNKNOWN_SINCE_LENGTH);
        return WireFormat.UNKNOWN_SINCE_LENGTH;
    }

    /**
     * CUTOFFS; the sender id is that of the RPC whose DATA showed a stale version.
     * {@code unscheduledUnits}: the unscheduled bytes per message this receiver accepts, in units of
     * {@link WireFormat#UNSCHEDULED_UNIT} (0 to 65,535; 0 says nothing).
     */
    public static int cutoffs(ByteBuffer b, long senderId, int[] cutoffs, int version, int unscheduledUnits) {
        int at = b.position();
        common(b, at, PacketType.CUTOFFS, senderId);
        for (int i = 0; i < WireFormat.PRIORITY_LEVELS; i++) {
            b.putInt(at + WireFormat.CUTOFFS_OFF_VALUES + 4 * i, cutoffs[i]);
        }
        b.putShort(at + WireFormat.CUTOFFS_OFF_VERSION, (short) version);
        b.putShort(at + WireFormat.CUTOFFS_OFF_UNSCHEDULED, (short) unscheduledUnits);
        b.position(at + WireFormat.CUTOFFS_LENGTH);
        return WireFormat.CUTOFFS_LENGTH;
    }

    /** ACK with {@code count} (at most {@link WireFormat#MAX_ACKS}) entries. */
    public static int ack(ByteBuffer b, long senderId, long[] ids, int[] ports, int count) {
        if (count < 0 || count > WireFormat.MAX_ACKS) {
            throw new IllegalArgumentException("ack count must be 0.." + WireFormat.MAX_ACKS + ": " + count);
        }
        int at = b.position();
        common(b, at, PacketType.ACK, senderId);
        b.put(at + WireFormat.ACK_OFF_COUNT, (byte) count);
        b.put(at + WireFormat.ACK_OFF_COUNT + 1, (byte) 0);
        b.putShort(at + WireFormat.ACK_OFF_COUNT + 2, (short) 0);
        for (int i = 0; i < count; i++) {
            int e = at + WireFormat.ACK_OFF_ENTRIES + i * WireFormat.ACK_ENTRY;
            b.putLong(e, ids[i]);
            b.putShort(e + 8, (short) ports[i]);
        }
        int len = WireFormat.ACK_OFF_ENTRIES + count * WireFormat.ACK_ENTRY;
        b.position(at + len);
        return len;
    }

    /** Length of an ACK packet with {@code count} entries. */
    public static int ackLength(int count) {
        return WireFormat.ACK_OFF_ENTRIES + count * WireFormat.ACK_ENTRY;
    }
}
