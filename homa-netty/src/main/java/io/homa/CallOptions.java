package io.homa;

import java.time.Duration;
import java.util.Objects;

/**
 * How one call is made: its deadline and whether its request is idempotent. Immutable; start from
 * {@link #DEFAULT} and derive with the {@code with} methods, from any thread:
 *
 * <pre>{@code
 *     CallOptions retryable = CallOptions.DEFAULT.withDeadline(Duration.ofMillis(200)).withIdempotent(true);
 *     socket.call(server, request, retryable);
 * }</pre>
 */
public final class CallOptions {
    /** The socket's defaults: {@link HomaConfig#defaultDeadline()} and {@link HomaConfig#idempotentCalls()}. */
    public static final CallOptions DEFAULT = new CallOptions(null, false);

    private final Duration deadline;
    private final boolean idempotent;

    private CallOptions(Duration deadline, boolean idempotent) {
        this.deadline = deadline;
        this.idempotent = idempotent;
    }

    /**
     * These options with a deadline: how long the call may take, from when it is made.
     *
     * @throws HomaBadArgumentException if {@code deadline} is null, zero or negative
     */
    public CallOptions withDeadline(Duration deadline) {
        if (deadline == null || deadline.isZero() || deadline.isNegative()) {
            throw new HomaBadArgumentException("deadline must be positive: " + deadline);
        }
        return new CallOptions(deadline, idempotent);
    }

    /**
     * These options with the request marked idempotent (running it twice does no harm) or not.
     * Should the server answer that it does not know the call (it restarted), an idempotent
     * request is sent again; one that is not is sent again only if the server cannot have run it,
     * and otherwise the call fails with {@link HomaOutcomeUnknownException}. A socket built with
     * {@link HomaConfig.Builder#idempotentCalls(boolean) idempotentCalls(true)} treats every call as
     * idempotent, whatever this says.
     */
    public CallOptions withIdempotent(boolean idempotent) {
        return new CallOptions(deadline, idempotent);
    }

    /** The deadline, or null for the socket's {@link HomaConfig#defaultDeadline()}. */
    public Duration deadline() {
        return deadline;
    }

    /** Whether the call was marked idempotent (the socket may make every call so). */
    public boolean idempotent() {
        return idempotent;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CallOptions c && c.idempotent == idempotent && Objects.equals(c.deadline, deadline);
    }

    @Override
    public int hashCode() {
        return Objects.hash(deadline, idempotent);
    }

    @Override
    public String toString() {
        return "CallOptions{deadline=" + (deadline == null ? "socket default" : deadline)
                + (idempotent ? ", idempotent" : "") + "}";
    }
}
