package io.homa.core.wire;

/**
 * A decoded Homa packet: a mutable holder that {@link PacketDecoder} fills in place, so that the
 * receive path allocates nothing. Only the fields of the decoded {@link #type} are meaningful.
 * The DATA payload is not copied: {@link #payloadOffset} and {@link #payloadLength} locate it in
 * the buffer that was decoded.
 */
public final class DecodedPacket {
    /** The packet type. */
    public PacketType type;
    /** The sender's RPC id (even from a client, odd from a server). */
    public long senderId;

    // DATA
    /** Total length of the message this segment belongs to. */
    public int messageLength;
    /** Bytes of the message the receiver may expect without further grants. */
    public int incoming;
    /** Offset of this segment within its message. */
    public int offset;
    /** Version of the receiver's cutoffs the sender last saw (0: none). */
    public int cutoffVersion;
    /** Whether this segment answers a RESEND. */
    public boolean retransmit;
    /** Piggy-backed ack: a client RPC id whose response is complete, or 0 for none. */
    public long ackId;
    /**
     * A request's deadline: the milliseconds its client will still wait, as of sending this packet
     * (0: none given). Responses carry 0.
     */
    public int deadlineMillis;
    /** Absolute index of the payload in the decoded buffer. */
    public int payloadOffset;
    /** Payload bytes in this segment. */
    public int payloadLength;

    // GRANT (offset also used by RESEND)
    /** GRANT: the sender may send all bytes before this offset. RESEND: start of the range. */
    public int grantOrResendOffset;
    /** GRANT / RESEND: the priority level to use for the data. */
    public int priority;
    /** RESEND: bytes to resend, or -1 for everything sent so far. */
    public int resendLength;
    /** RESEND: the client asks for RPC_UNKNOWN_SINCE if the RPC is unknown ({@link WireFormat#RESEND_FLAG_WANTS_UPTIME}). */
    public boolean wantsUptime;

    // RPC_UNKNOWN_SINCE
    /** RPC_UNKNOWN_SINCE: the server's incarnation (random, new at each start of its engine). */
    public long incarnation;
    /** RPC_UNKNOWN_SINCE: how long that incarnation had been up when it answered, in ns (never negative). */
    public long uptimeNanos;

    // CUTOFFS
    /** CUTOFFS: index = priority level, value = largest message length for that level. */
    public final int[] cutoffs = new int[WireFormat.PRIORITY_LEVELS];
    /**
     * CUTOFFS: the unscheduled bytes per message the receiver accepts, in units of
     * {@link WireFormat#UNSCHEDULED_UNIT} bytes (rounded down); 0 if it did not say (an older engine).
     */
    public int unscheduledUnits;

    // ACK
    /** ACK: number of valid entries in {@link #ackIds} / {@link #ackPorts}. */
    public int ackCount;
    public final long[] ackIds = new long[WireFormat.MAX_ACKS];
    public final int[] ackPorts = new int[WireFormat.MAX_ACKS];

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder().append(type).append(" id=").append(senderId);
        if (type == null) {
            return sb.toString();
        }
        switch (type) {
            case DATA -> sb.append(" len=").append(messageLength).append(" incoming=").append(incoming)
                    .append(" off=").append(offset).append(" seg=").append(payloadLength)
                    .append(retransmit ? " retransmit" : "").append(ackId != 0 ? " ack=" + ackId : "");
            case GRANT -> sb.append(" off=").append(grantOrResendOffset).append(" prio=").append(priority);
            case RESEND -> sb.append(" off=").append(grantOrResendOffset).append(" len=").append(resendLength)
                    .append(" prio=").append(priority).append(wantsUptime ? " wants-uptime" : "");
            case RPC_UNKNOWN_SINCE -> sb.append(" incarnation=").append(Long.toHexString(incarnation))
                    .append(" uptime=").append(uptimeNanos).append("ns");
            case CUTOFFS -> sb.append(" version=").append(cutoffVersion)
                    .append(" unscheduled=").append(unscheduledUnits * WireFormat.UNSCHEDULED_UNIT);
            case ACK -> sb.append(" count=").append(ackCount);
            default -> { }
        }
        return sb.toString();
    }
}
