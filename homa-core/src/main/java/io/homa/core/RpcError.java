package io.homa.core;

/** Why a client RPC failed. */
public enum RpcError {
    /** The server was silent for the configured timeout. */
    TIMEOUT,
    /** The server kept answering RPC_UNKNOWN after the configured number of restarts. */
    PEER_UNKNOWN_RPC
}
