package io.homa.core.psp;

/** Why a secured receiver refused a datagram (each counted apart). */
public enum PspDrop {
    /** A plain Homa packet (or anything not sealed) reached a secured socket. */
    NOT_SEALED,
    /** Sealed, but too short, with a crypt offset past its end, or a version this side does not run. */
    BAD_HEADER,
    /** Its SPI names a master key this side does not hold (retired, or never installed). */
    UNKNOWN_KEY,
    /** The tag does not verify: a wrong key, or a byte changed anywhere in the packet. */
    AUTH_FAILED,
    /** Its IV was delivered before, or is older than the replay window. */
    REPLAY
}
