package io.homa.core.wire;

import java.nio.ByteBuffer;

/**
 * Validates and decodes one datagram. It checks everything before anything is used: a bad
 * datagram yields a {@link DropReason}, never an exception, and no field sizes an allocation.
 * The checks that need protocol state (is the RPC known, is the data granted) belong to the engine.
 */
public final class PacketDecoder {
    private PacketDecoder() {
    }

    /**
     * Whether the datagram between the buffer's position and limit says it is DATA: its type byte
     * alone, nothing else read or checked (for counting and for fault injection, not for trust).
     */
    public static boolean isData(ByteBuffer datagram) {
        return datagram.remaining() > WireFormat.OFF_TYPE
                && (datagram.get(datagram.position() + WireFormat.OFF_TYPE) & 0xFF) == PacketType.DATA.code;
    }

    /**
     * Decodes the bytes between {@code buf.position()} and {@code buf.limit()} into {@code out}.
     * The buffer's position and limit are not changed.
     *
     * @param maxMessageLength the largest message length to accept
     * @return {@code null} when the packet is valid, else why it must be dropped
     */
    public static DropReason decode(ByteBuffer buf, int maxMessageLength, DecodedPacket out) {
        return decode(buf, buf.position(), buf.remaining(), maxMessageLength, out);
    }

    /**
     * Decodes the {@code len} bytes of one packet at absolute index {@code base} of {@code buf}
     * (one segment of a coalesced datagram, see {@link #packetLength}) into {@code out}. The
     * buffer's position and limit are not read or changed.
     *
     * @return {@code null} when the packet is valid, else why it must be dropped
     */
    public static DropReason decode(ByteBuffer buf, int base, int len, int maxMessageLength, DecodedPacket out) {
        if (buf.order() != java.nio.ByteOrder.BIG_ENDIAN) {
            buf = buf.duplicate().order(java.nio.ByteOrder.BIG_ENDIAN); // rare: callers use network order
        }
        if (len < WireFormat.COMMON_HEADER) {
            return DropReason.TOO_SHORT;
        }
        if ((buf.getShort(base + WireFormat.OFF_MAGIC) & 0xFFFF) != WireFormat.MAGIC) {
            return (buf.get(base) & 0xFF) == io.homa.core.psp.PspFormat.NEXT_HEADER_HOMA
                    ? DropReason.SEALED : DropReason.BAD_MAGIC;
        }
        if ((buf.get(base + WireFormat.OFF_VERSION) & 0xFF) != WireFormat.VERSION) {
            return DropReason.BAD_VERSION;
        }
        PacketType type = PacketType.fromCode(buf.get(base + WireFormat.OFF_TYPE) & 0xFF);
        if (type == null) {
            return DropReason.UNKNOWN_TYPE;
        }
        out.type = type;
        out.senderId = buf.getLong(base + WireFormat.OFF_SENDER_ID);
        if ((out.senderId & ~1L) == 0) {
            return DropReason.BAD_ID;
        }
        switch (type) {
            case DATA:
                return decodeData(buf, base, len, maxMessageLength, out);
            case GRANT:
                if (len != WireFormat.GRANT_LENGTH) {
                    return DropReason.BAD_LENGTH;
                }
                long grant = u32(buf, base + WireFormat.GRANT_OFF_OFFSET);
                if (grant > maxMessageLength) {
                    return DropReason.BEYOND_MESSAGE;
                }
                out.grantOrResendOffset = (int) grant;
                out.priority = buf.get(base + WireFormat.GRANT_OFF_PRIORITY) & 0xFF;
                return out.priority > WireFormat.MAX_PRIORITY ? DropReason.BAD_PRIORITY : null;
            case RESEND:
                if (len != WireFormat.RESEND_LENGTH) {
                    return DropReason.BAD_LENGTH;
                }
                long offset = u32(buf, base + WireFormat.RESEND_OFF_OFFSET);
                int length = buf.getInt(base + WireFormat.RESEND_OFF_LENGTH);
                if (length < -1) {
                    return DropReason.BAD_LENGTH;
                }
                if (offset > maxMessageLength || (length > 0 && offset + length > maxMessageLength)) {
                    return DropReason.BEYOND_MESSAGE;
                }
                out.grantOrResendOffset = (int) offset;
                out.resendLength = length;
                out.priority = buf.get(base + WireFormat.RESEND_OFF_PRIORITY) & 0xFF;
                // Unknown flags are ignored, as earlier peers ignored the whole byte.
                out.wantsUptime = (buf.get(base + WireFormat.RESEND_OFF_FLAGS) & WireFormat.RESEND_FLAG_WANTS_UPTIME) != 0;
                return out.priority > WireFormat.MAX_PRIORITY ? DropReason.BAD_PRIORITY : null;
            case RPC_UNKNOWN_SINCE:
                if (len != WireFormat.UNKNOWN_SINCE_LENGTH) {
                    return DropReason.BAD_LENGTH;
                }
                out.incarnation = buf.getLong(base + WireFormat.UNKNOWN_SINCE_OFF_INCARNATION);
                out.uptimeNanos = buf.getLong(base + WireFormat.UNKNOWN_SINCE_OFF_UPTIME);
                return out.uptimeNanos < 0 ? DropReason.BAD_UPTIME : null;
            case RPC_UNKNOWN:
            case BUSY:
            case NEED_ACK:
            case OVERLOADED:
            case CANCEL:
                return len == WireFormat.BARE_LENGTH ? null : DropReason.BAD_LENGTH;
            case CUTOFFS:
                if (len != WireFormat.CUTOFFS_LENGTH) {
                    return DropReason.BAD_LENGTH;
                }
                for (int i = 0; i < WireFormat.PRIORITY_LEVELS; i++) {
                    int c = buf.getInt(base + WireFormat.CUTOFFS_OFF_VALUES + 4 * i);
                    if (c < 0) {
                        return DropReason.BAD_CUTOFFS;
                    }
                    out.cutoffs[i] = c;
                }
                out.cutoffVersion = buf.getShort(base + WireFormat.CUTOFFS_OFF_VERSION) & 0xFFFF;
                out.unscheduledUnits = buf.getShort(base + WireFormat.CUTOFFS_OFF_UNSCHEDULED) & 0xFFFF; // any value is valid
                return out.cutoffVersion == 0 ? DropReason.BAD_CUTOFFS : null;
            case ACK:
                if (len < WireFormat.ACK_OFF_ENTRIES) {
                    return DropReason.BAD_LENGTH;
                }
                int count = buf.get(base + WireFormat.ACK_OFF_COUNT) & 0xFF;
                if (count > WireFormat.MAX_ACKS
                        || len != WireFormat.ACK_OFF_ENTRIES + count * WireFormat.ACK_ENTRY) {
                    return DropReason.BAD_ACK_COUNT;
                }
                out.ackCount = count;
                for (int i = 0; i < count; i++) {
                    int at = base + WireFormat.ACK_OFF_ENTRIES + i * WireFormat.ACK_ENTRY;
                    long id = buf.getLong(at);
                    if (id == 0 || (id & 1) != 0) {
                        return DropReason.BAD_ID;
                    }
                    out.ackIds[i] = id;
                    out.ackPorts[i] = buf.getShort(at + 8) & 0xFFFF;
                }
                return null;
            default:
                return DropReason.UNKNOWN_TYPE;
        }
    }

    /**
     * The length of the packet at absolute index {@code at}, as its own header says (DATA: header
     * plus its segment length; the other types: their fixed length, ACK: by its count), or -1 if
     * the {@code available} bytes there do not start with a Homa header of this version that says
     * it. Nothing is trusted: {@link #decode} still checks the packet. This is how a receiver walks
     * a datagram that UDP GRO coalesced from several segments: they are all as long as the first,
     * but the last, which may be shorter.
     */
    public static int packetLength(ByteBuffer buf, int at, int available) {
        if (available < WireFormat.COMMON_HEADER
                || (buf.getShort(at + WireFormat.OFF_MAGIC) & 0xFFFF) != WireFormat.MAGIC
                || (buf.get(at + WireFormat.OFF_VERSION) & 0xFF) != WireFormat.VERSION) {
            return -1;
        }
        PacketType type = PacketType.fromCode(buf.get(at + WireFormat.OFF_TYPE) & 0xFF);
        if (type == null) {
            return -1;
        }
        return switch (type) {
            case DATA -> available < WireFormat.DATA_HEADER ? -1
                    : WireFormat.DATA_HEADER + (buf.getShort(at + WireFormat.DATA_OFF_SEGMENT_LENGTH) & 0xFFFF);
            case GRANT -> WireFormat.GRANT_LENGTH;
            case RESEND -> WireFormat.RESEND_LENGTH;
            case RPC_UNKNOWN, BUSY, NEED_ACK, OVERLOADED, CANCEL -> WireFormat.BARE_LENGTH;
            case RPC_UNKNOWN_SINCE -> WireFormat.UNKNOWN_SINCE_LENGTH;
            case CUTOFFS -> WireFormat.CUTOFFS_LENGTH;
            case ACK -> available < WireFormat.ACK_OFF_ENTRIES ? -1
                    : WireFormat.ACK_OFF_ENTRIES + (buf.get(at + WireFormat.ACK_OFF_COUNT) & 0xFF) * WireFormat.ACK_ENTRY;
            default -> -1;
        };
    }

    private static DropReason decodeData(ByteBuffer buf, int base, int len, int maxMessageLength,
                                         DecodedPacket out) {
        if (len < WireFormat.DATA_HEADER) {
            return DropReason.BAD_LENGTH;
        }
        long messageLength = u32(buf, base + WireFormat.DATA_OFF_MESSAGE_LENGTH);
        if (messageLength > maxMessageLength) {
            return DropReason.MESSAGE_TOO_LONG;
        }
        long incoming = u32(buf, base + WireFormat.DATA_OFF_INCOMING);
        long offset = u32(buf, base + WireFormat.DATA_OFF_OFFSET);
        int segment = len - WireFormat.DATA_HEADER;
        if ((buf.getShort(base + WireFormat.DATA_OFF_SEGMENT_LENGTH) & 0xFFFF) != segment) {
            return DropReason.BAD_LENGTH; // the header disagrees with the bytes: truncated, or padded
        }
        if (incoming > messageLength || offset + segment > messageLength) {
            return DropReason.BEYOND_MESSAGE;
        }
        if (segment == 0 && messageLength != 0) {
            return DropReason.EMPTY_SEGMENT;
        }
        int flags = buf.get(base + WireFormat.DATA_OFF_FLAGS) & 0xFF;
        if ((flags & ~WireFormat.DATA_FLAGS_DEFINED) != 0) {
            return DropReason.BAD_FLAGS;
        }
        long ackId = buf.getLong(base + WireFormat.DATA_OFF_ACK_ID);
        if ((ackId & 1) != 0) {
            return DropReason.BAD_ID;
        }
        out.messageLength = (int) messageLength;
        out.incoming = (int) incoming;
        out.offset = (int) offset;
        out.cutoffVersion = buf.getShort(base + WireFormat.DATA_OFF_CUTOFF_VERSION) & 0xFFFF;
        out.retransmit = (flags & WireFormat.FLAG_RETRANSMIT) != 0;
        out.ackId = ackId;
        out.deadlineMillis = (buf.get(base + WireFormat.DATA_OFF_DEADLINE_HIGH) & 0xFF) << 16
                | (buf.getShort(base + WireFormat.DATA_OFF_DEADLINE_LOW) & 0xFFFF);
        out.payloadOffset = base + WireFormat.DATA_HEADER;
        out.payloadLength = segment;
        return null;
    }

    private static long u32(ByteBuffer buf, int index) {
        return buf.getInt(index) & 0xFFFF_FFFFL;
    }
}
