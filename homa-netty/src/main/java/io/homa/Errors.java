package io.homa;

import io.homa.internal.Failure;

/** The API's exception for each failure the shell reports (its {@link Failure.Factory}). */
final class Errors {
    private Errors() {
    }

    static HomaException create(Failure kind, String message, Throwable cause) {
        HomaException e = switch (kind) {
            case TIMEOUT -> new HomaTimeoutException(message);
            case MESSAGE_TOO_LARGE -> new HomaMessageTooLargeException(message);
            case SOCKET_CLOSED -> new HomaClosedException(message);
            case UNKNOWN_RPC -> new HomaUnknownRpcException(message);
            case BAD_ARGUMENT -> new HomaBadArgumentException(message, cause);
            case OVERLOADED -> new HomaOverloadedException(message);
            case RESOURCE_LIMIT -> new HomaException(HomaException.Kind.RESOURCE_LIMIT, message, cause);
            case IO_ERROR -> new HomaException(HomaException.Kind.IO_ERROR, message, cause);
            case OUTCOME_UNKNOWN -> new HomaOutcomeUnknownException(message);
            case AUTHENTICATION_FAILED -> new HomaAuthenticationException(message, cause);
        };
        if (cause != null && e.getCause() == null) {
            e.initCause(cause);
        }
        return e;
    }
}
