package io.homa;

/**
 * The base of every exception this library raises. Each one carries a {@link Kind} and a message
 * that says what happened, to which RPC or peer, and (where it helps) what to do about it.
 *
 * <p>Where they appear:
 * <ul>
 *   <li>A call that fails completes its future exceptionally with a {@code HomaException}
 *       (wrapped in an {@link java.util.concurrent.ExecutionException} by {@code get()}, in a
 *       {@link java.util.concurrent.CompletionException} by {@code join()}).</li>
 *   <li>Arguments that can never work (null, a message longer than the configured maximum, a
 *       non-positive deadline) are rejected at once: the method throws, nothing is sent.</li>
 * </ul>
 * It is unchecked, so that lambdas and futures carry it without ceremony.
 */
public class HomaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** What went wrong; each kind but {@link #RESOURCE_LIMIT} and {@link #IO_ERROR} has its own subclass. */
    public enum Kind {
        /** The peer stayed silent, or the call's deadline passed: {@link HomaTimeoutException}. */
        TIMEOUT,
        /** A message is longer than the configured maximum: {@link HomaMessageTooLargeException}. */
        MESSAGE_TOO_LARGE,
        /** The socket is closed (or was closed while the call was in flight): {@link HomaClosedException}. */
        SOCKET_CLOSED,
        /** The server kept answering that it does not know the RPC: {@link HomaUnknownRpcException}. */
        UNKNOWN_RPC,
        /** An argument can never work (null, negative, unresolved...): {@link HomaBadArgumentException}. */
        BAD_ARGUMENT,
        /** The server's handlers were too far behind and it refused the request unrun: {@link HomaOverloadedException}. */
        OVERLOADED,
        /** A configured limit (most live RPCs in one engine) is reached; retry later. */
        RESOURCE_LIMIT,
        /** The operating system refused something (e.g. binding the socket). */
        IO_ERROR,
        /**
         * The server restarted and may have run the request before: whether it ran is unknown
         * ({@link HomaOutcomeUnknownException}).
         */
        OUTCOME_UNKNOWN,
        /**
         * A secured socket could not agree keys with the peer (an untrusted certificate, a failed
         * TLS handshake): {@link HomaAuthenticationException}.
         */
        AUTHENTICATION_FAILED
    }

    private final Kind kind;

    /** An exception of {@code kind}; the message says what happened, to which RPC or peer. */
    public HomaException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    /** The same, with its cause (an I/O error, say). */
    public HomaException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    /** What went wrong. */
    public Kind kind() {
        return kind;
    }
}
