package io.homa.internal;

/**
 * What went wrong, as the shell reports it. The shell never names the API's exceptions (the API
 * package sits above it): it hands a kind and a message to its {@link Factory}, and the socket's
 * factory makes the {@code HomaException} of that kind (the constants mirror
 * {@code HomaException.Kind}). Internal use only.
 */
public enum Failure {
    TIMEOUT, MESSAGE_TOO_LARGE, SOCKET_CLOSED, UNKNOWN_RPC, BAD_ARGUMENT, OVERLOADED, RESOURCE_LIMIT, IO_ERROR, OUTCOME_UNKNOWN,
    AUTHENTICATION_FAILED;

    /** Makes the exception that reports a failure to the application. */
    @FunctionalInterface
    public interface Factory {
        /** The exception for a failure of {@code kind}; {@code cause} may be null. */
        RuntimeException create(Failure kind, String message, Throwable cause);

        /** The exception for a failure of {@code kind} without a cause. */
        default RuntimeException create(Failure kind, String message) {
            return create(kind, message, null);
        }
    }
}
