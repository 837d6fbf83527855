package io.homa.core;

/** Why a client RPC failed. */
public enum RpcError {
    /** The server was silent for the configured timeout. */
    TIMEOUT,
    /** The server kept answering RPC_UNKNOWN after the configured number of restarts. */
    PEER_UNKNOWN_RPC,
    /**
     * The server refused the request without running it: its application is overloaded (an
     * OVERLOADED packet). Calling again later is safe.
     */
    OVERLOADED,
    /**
     * The server no longer knows the RPC, and an earlier incarnation of it (before a restart) may
     * have had the whole request, and run it: whether it ran is unknown. Only for a request not
     * started as idempotent (an idempotent one is sent again instead); see docs/protocol.md.
     */
    OUTCOME_UNKNOWN
}
