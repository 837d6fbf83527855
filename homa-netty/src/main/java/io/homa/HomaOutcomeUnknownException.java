package io.homa;

/**
 * Whether the call's request ran is unknown: the server answered that it does not know the call,
 * and it may be a new incarnation (it restarted) of a server that had received the whole request,
 * and may have run it before it went away. The socket does not send a request again when that
 * could run it twice, unless the call is idempotent ({@link CallOptions#withIdempotent(boolean)},
 * {@link HomaConfig.Builder#idempotentCalls(boolean)}). Retry it yourself if running it twice is
 * harmless, or find out from the server (by a request id of your own) whether it ran.
 * See docs/protocol.md, "Server restarts".
 */
public class HomaOutcomeUnknownException extends HomaException {
    private static final long serialVersionUID = 1L;

    /** An exception whose message names the call and the server. */
    public HomaOutcomeUnknownException(String message) {
        super(Kind.OUTCOME_UNKNOWN, message);
    }
}
