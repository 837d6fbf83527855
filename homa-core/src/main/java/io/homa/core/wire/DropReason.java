package io.homa.core.wire;

/**
 * Why an incoming datagram was dropped. The decoder returns the structural reasons; the engine
 * adds the ones that need protocol state. Every drop is counted per reason, never thrown.
 */
public enum DropReason {
    /** Shorter than the common header. */
    TOO_SHORT,
    /** The magic number is not Homa's: a datagram from some other protocol. */
    BAD_MAGIC,
    /** A Homa packet of a wire version this implementation does not speak. */
    BAD_VERSION,
    /** A type code that is not a Homa packet type (or is FREEZE, which we do not accept). */
    UNKNOWN_TYPE,
    /** The datagram length does not fit its type (too short for its fields, or trailing bytes). */
    BAD_LENGTH,
    /** A DATA message length above the configured maximum. */
    MESSAGE_TOO_LONG,
    /** A DATA segment (or RESEND range, or GRANT offset) that lies beyond the message. */
    BEYOND_MESSAGE,
    /** A DATA segment with no payload in a non-empty message. */
    EMPTY_SEGMENT,
    /** A priority outside 0..7. */
    BAD_PRIORITY,
    /** An ACK whose count is outside 0..5 or disagrees with the datagram length. */
    BAD_ACK_COUNT,
    /** CUTOFFS with a negative cutoff or version 0 (which means "none"). */
    BAD_CUTOFFS,
    /** A flag bit this version does not define. */
    BAD_FLAGS,
    /** A sender id of 0 or 1 (client id 0 is never used), or an ack id that is 0 or odd. */
    BAD_ID,
    /** A packet for an RPC the engine does not know (after answering RPC_UNKNOWN where due). */
    UNKNOWN_RPC,
    /** A packet for an RPC that belongs to a different peer. */
    WRONG_PEER,
    /** A DATA packet whose message length differs from the one already known for the message. */
    LENGTH_CHANGED,
    /** DATA beyond what this receiver has granted. */
    BEYOND_GRANT,
    /** A new server RPC refused: the engine holds {@code maxRpcs} RPCs. */
    RPC_LIMIT,
    /** A new server RPC refused: this peer already has {@code maxServerRpcsPerPeer} server RPCs. */
    PEER_RPC_LIMIT,
    /**
     * Incoming data refused: it would take the engine's memory for incomplete messages beyond
     * {@code maxBufferedBytes}, or split a message into too many received ranges.
     */
    BUFFER_LIMIT,
    /** Incoming data refused: it would take this peer's share beyond {@code maxBufferedBytesPerPeer}. */
    PEER_BUFFER_LIMIT,
    /** A packet that makes no sense in the RPC's state (e.g. a GRANT while the server has no response yet, NEED_ACK from a client, a response before the request was sent). */
    WRONG_STATE,
    /** RPC_UNKNOWN_SINCE with a negative uptime. */
    BAD_UPTIME,
    /**
     * A sealed (PSP) datagram reached a plain socket: its peer is secured and this socket is not
     * (or holds no keys). Told apart from {@link #BAD_MAGIC} so that the mismatch is visible.
     */
    SEALED;

    private static final DropReason[] VALUES = values();

    /** All reasons, shared (do not modify). */
    public static DropReason[] all() {
        return VALUES;
    }
}
