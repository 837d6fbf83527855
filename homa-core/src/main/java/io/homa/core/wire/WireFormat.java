package io.homa.core.wire;

/**
 * Byte layout of Homa-over-UDP packets (all fields big-endian). See docs/wire-format.md for
 * the diagrams. UDP already carries ports, length and checksum, so the common header holds only
 * what UDP does not: a magic number and version (to recognise foreign or incompatible
 * datagrams), the packet type and the sender's RPC id.
 */
public final class WireFormat {
    private WireFormat() {
    }

    /** "HM": the first two bytes of every Homa packet. */
    public static final int MAGIC = 0x484D;
    /**
     * The wire version this implementation speaks. Version 2 added the DATA segment length (which
     * lets a receiver walk a datagram that UDP GRO coalesced from several segments).
     */
    public static final int VERSION = 2;

    // Common header: magic u16, version u8, type u8, sender_id u64.
    public static final int OFF_MAGIC = 0;
    public static final int OFF_VERSION = 2;
    public static final int OFF_TYPE = 3;
    public static final int OFF_SENDER_ID = 4;
    public static final int COMMON_HEADER = 12;

    // DATA: message_length u32, incoming u32, offset u32, cutoff_version u16, flags u8,
    // deadline_high u8, ack_id u64, deadline_low u16, segment_length u16, then the payload.
    public static final int DATA_OFF_MESSAGE_LENGTH = 12;
    public static final int DATA_OFF_INCOMING = 16;
    public static final int DATA_OFF_OFFSET = 20;
    public static final int DATA_OFF_CUTOFF_VERSION = 24;
    public static final int DATA_OFF_FLAGS = 26;
    public static final int DATA_OFF_ACK_ID = 28;
    /**
     * A request's deadline: the milliseconds the client will still wait, as a 24-bit value whose
     * high byte is at {@link #DATA_OFF_DEADLINE_HIGH} and low 16 bits at this offset; 0 for none.
     * Both were written as zero and ignored by earlier peers (a reserved byte, and an ack port the
     * engine never used), so peers that do not know the field still talk to those that do.
     */
    public static final int DATA_OFF_DEADLINE_LOW = 36;
    /** The high byte of the deadline (see {@link #DATA_OFF_DEADLINE_LOW}). */
    public static final int DATA_OFF_DEADLINE_HIGH = 27;
    /** The largest deadline DATA can carry, in ms (about 4.7 hours); a longer one is sent as none. */
    public static final int MAX_DEADLINE_MILLIS = 0xFF_FFFF;
    /**
     * Payload bytes of this segment. A datagram may hold several packets back to back (UDP GRO
     * coalesces segments of one flow, all as long as the first but the last, which may be
     * shorter): each packet's own length is what lets the receiver find the next.
     */
    public static final int DATA_OFF_SEGMENT_LENGTH = 38;
    public static final int DATA_HEADER = 40;
    /** DATA flag: this segment is a retransmission answering a RESEND. */
    public static final int FLAG_RETRANSMIT = 0x01;
    public static final int DATA_FLAGS_DEFINED = FLAG_RETRANSMIT;

    // GRANT: offset u32, priority u8, reserved 3 bytes.
    public static final int GRANT_OFF_OFFSET = 12;
    public static final int GRANT_OFF_PRIORITY = 16;
    public static final int GRANT_LENGTH = 20;

    // RESEND: offset u32, length i32 (-1: everything sent so far), priority u8, flags u8, reserved 2.
    public static final int RESEND_OFF_OFFSET = 12;
    public static final int RESEND_OFF_LENGTH = 16;
    public static final int RESEND_OFF_PRIORITY = 20;
    /** RESEND flags: a byte earlier peers wrote as zero and never read. */
    public static final int RESEND_OFF_FLAGS = 21;
    public static final int RESEND_LENGTH = 24;
    /**
     * RESEND flag (client to server): if you do not know this RPC, answer RPC_UNKNOWN_SINCE with
     * your uptime rather than RPC_UNKNOWN. A peer that does not know the flag ignores it.
     */
    public static final int RESEND_FLAG_WANTS_UPTIME = 0x01;

    // RPC_UNKNOWN_SINCE: incarnation u64 (a random number of the server's engine, new at each
    // start), uptime_ns u64 (the incarnation's age, in ns: fine enough to compare with a request
    // sent in its first millisecond).
    public static final int UNKNOWN_SINCE_OFF_INCARNATION = 12;
    public static final int UNKNOWN_SINCE_OFF_UPTIME = 20;
    public static final int UNKNOWN_SINCE_LENGTH = 28;

    // RPC_UNKNOWN, BUSY, NEED_ACK, OVERLOADED, CANCEL: the common header alone.
    public static final int BARE_LENGTH = COMMON_HEADER;

    // CUTOFFS: 8 cutoffs u32 (index = priority level), cutoff_version u16, unscheduled_units u16.
    public static final int CUTOFFS_OFF_VALUES = 12;
    public static final int CUTOFFS_OFF_VERSION = 44;
    /** The unscheduled bytes per message the receiver accepts, in {@link #UNSCHEDULED_UNIT}s; 0: not said. */
    public static final int CUTOFFS_OFF_UNSCHEDULED = 46;
    /** Bytes per unit of CUTOFFS' unscheduled_units: 64, so 16 bits say up to 4,194,240 bytes. */
    public static final int UNSCHEDULED_UNIT = 64;
    /** The largest unscheduled_units, which means "at least this many". */
    public static final int MAX_UNSCHEDULED_UNITS = 0xFFFF;
    public static final int CUTOFFS_LENGTH = 48;

    // ACK: count u8, reserved 3 bytes, then count x (client_id u64, server_port u16).
    public static final int ACK_OFF_COUNT = 12;
    public static final int ACK_OFF_ENTRIES = 16;
    public static final int ACK_ENTRY = 10;
    /** At most this many acks in one ACK packet (as in Linux Homa). */
    public static final int MAX_ACKS = 5;

    /** Number of priority levels. */
    public static final int PRIORITY_LEVELS = 8;
    /** The highest priority level. */
    public static final int MAX_PRIORITY = 7;

    /** Bytes of IPv4 + UDP headers in front of every Homa packet. */
    public static final int IPV4_UDP_OVERHEAD = 28;
    /**
     * Link time of an Ethernet frame beyond its IP packet, in bytes: header 14, FCS 4, preamble 8,
     * inter-frame gap 12. The pacer counts it; without it a stream of small packets takes up to a
     * sixth more of the link than the pacer believes, and the NIC queue it means to keep short grows.
     */
    public static final int ETHERNET_FRAME_OVERHEAD = 38;
    /** Bytes of IPv6 + UDP headers in front of every Homa packet. */
    public static final int IPV6_UDP_OVERHEAD = 48;
}
