package io.homa.core.wire;

/**
 * The Homa packet types, numbered as in Linux Homa, and three of homa-java's own (OVERLOADED, CANCEL,
 * RPC_UNKNOWN_SINCE). FREEZE
 * (0x16) is a debugging aid of the reference and is deliberately not part of this wire format.
 */
public enum PacketType {
    /** A segment of a request or response message. */
    DATA(0x10),
    /** Receiver to sender: you may send all bytes before {@code offset}, at {@code priority}. */
    GRANT(0x11),
    /** Receiver to sender: please send {@code [offset, offset+length)} again. */
    RESEND(0x12),
    /** "I have no such RPC": a client restarts its request, a server frees the RPC. */
    RPC_UNKNOWN(0x13),
    /** "Alive, but not sending now": resets the peer's silence timer. */
    BUSY(0x14),
    /** The receiver's unscheduled-priority cutoffs and their version. */
    CUTOFFS(0x15),
    /** Server to client: please acknowledge this finished response. */
    NEED_ACK(0x17),
    /** Client to server: these responses were received, free their state. */
    ACK(0x18),
    /**
     * Server to client: "refused without running it, my application is overloaded"; the client
     * fails the RPC at once. homa-java's own, above Linux Homa's codes (which drops it as unknown).
     */
    OVERLOADED(0x1F),
    /**
     * Client to server: "I gave up this RPC (cancelled, or its deadline passed): drop it, and do not
     * run its request if you have not yet". homa-java's own, like OVERLOADED (a peer that does not
     * know it drops it as unknown, and learns of the abort as before, when it next asks).
     */
    CANCEL(0x1E),
    /**
     * Server to client: RPC_UNKNOWN, and how long this server has been up (its incarnation's age),
     * so that the client can tell whether an earlier incarnation may have run the request. Sent only
     * in answer to a RESEND that asks for it ({@link WireFormat#RESEND_FLAG_WANTS_UPTIME}): a peer
     * that does not set the flag gets RPC_UNKNOWN as before. homa-java's own.
     */
    RPC_UNKNOWN_SINCE(0x1D);

    /** The type code on the wire. */
    public final int code;

    private static final PacketType[] BY_CODE = new PacketType[256];

    static {
        for (PacketType t : values()) {
            BY_CODE[t.code] = t;
        }
    }

    PacketType(int code) {
        this.code = code;
    }

    /** The type with this code, or {@code null} when the code is not one of ours. */
    public static PacketType fromCode(int code) {
        return code >= 0 && code < 256 ? BY_CODE[code] : null;
    }

    /** Whether this type is a control packet (everything but DATA). */
    public boolean isControl() {
        return this != DATA;
    }
}
