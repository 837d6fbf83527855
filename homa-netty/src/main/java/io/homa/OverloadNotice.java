package io.homa;

import io.homa.core.wire.WireFormat;

import java.nio.ByteBuffer;

/**
 * The server's "refused unrun, overloaded" answer to a request ({@link HomaOverloadedException}):
 * a 12-byte header-only packet like RPC_UNKNOWN, with its own type code, sent and read by the I/O
 * shell (the engine has no such packet yet). Its sender id is the server's id of the RPC (the
 * client's id XOR 1), as in every packet a server sends about an RPC.
 *
 * <p>A peer that does not know the type (Linux Homa, an older homa-java) drops it as an unknown
 * type; it then learns the same way as for any dropped request: its next RESEND is answered
 * RPC_UNKNOWN, it sends the request again, and the server decides afresh. The client acts on a
 * notice only when it names one of its live calls and comes from that call's server address (the
 * same ownership rule as the engine's), so an off-path sender needs the RPC's id.
 */
final class OverloadNotice {
    /** The type code: above Linux Homa's 0x10 to 0x18. */
    static final int TYPE = 0x1F;
    static final int LENGTH = WireFormat.BARE_LENGTH;

    private OverloadNotice() {
    }

    /**
     * Writes a notice at {@code b}'s position (big-endian) about the RPC the client calls
     * {@code clientRpcId} (the id of the engine's REQUEST event).
     */
    static void write(ByteBuffer b, long clientRpcId) {
        int at = b.position();
        b.putShort(at + WireFormat.OFF_MAGIC, (short) WireFormat.MAGIC);
        b.put(at + WireFormat.OFF_VERSION, (byte) WireFormat.VERSION);
        b.put(at + WireFormat.OFF_TYPE, (byte) TYPE);
        b.putLong(at + WireFormat.OFF_SENDER_ID, clientRpcId ^ 1);
        b.position(at + LENGTH);
    }

    /** Whether {@code datagram} (from its position) is a well-formed notice. */
    static boolean is(ByteBuffer datagram) {
        int at = datagram.position();
        return datagram.remaining() == LENGTH
                && (datagram.getShort(at + WireFormat.OFF_MAGIC) & 0xFFFF) == WireFormat.MAGIC
                && (datagram.get(at + WireFormat.OFF_VERSION) & 0xFF) == WireFormat.VERSION
                && (datagram.get(at + WireFormat.OFF_TYPE) & 0xFF) == TYPE;
    }

    /** The client's id of the RPC a notice (checked with {@link #is}) is about. */
    static long clientRpcId(ByteBuffer notice) {
        return notice.getLong(notice.position() + WireFormat.OFF_SENDER_ID) ^ 1;
    }
}
