package io.homa.grpc;

import io.grpc.Deadline;
import io.grpc.Status;
import io.homa.HomaClosedException;
import io.homa.HomaException;
import io.homa.HomaMessageTooLargeException;
import io.homa.HomaTimeoutException;
import io.homa.HomaUnknownRpcException;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The gRPC status for a Homa RPC that failed (docs/grpc.md has the table). A timeout is
 * DEADLINE_EXCEEDED when the call's own deadline is (about) over, since Homa was given that
 * deadline, and UNAVAILABLE otherwise: the peer went silent, as for a broken connection.
 */
final class Failures {
    /** A Homa timeout this close to the gRPC deadline is that deadline (the two clocks tick apart). */
    private static final long DEADLINE_SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private Failures() {
    }

    /**
     * Whether a Homa refusal (OVERLOADED) of a frame sent with {@code sentTimeoutNanos} of the
     * call's deadline left came because that deadline passed in the server's queue: the call has
     * no more time left than the server's usual guard (homa-netty takes a caller's deadline to end
     * 2% of its time left early, 1 to 100 ms, more while its loop runs late, which this cannot
     * see; ServedRequests.deadlineGuard) plus {@link #DEADLINE_SLACK_NANOS} for the way back.
     */
    static boolean refusedAtItsDeadline(Deadline deadline, long sentTimeoutNanos) {
        if (deadline == null || sentTimeoutNanos == Frame.NO_TIMEOUT) {
            return false;
        }
        long guard = Math.min(TimeUnit.MILLISECONDS.toNanos(100),
                Math.max(TimeUnit.MILLISECONDS.toNanos(1), sentTimeoutNanos / 50));
        return deadline.timeRemaining(TimeUnit.NANOSECONDS) <= guard + DEADLINE_SLACK_NANOS;
    }

    static Status toStatus(Throwable t, Deadline deadline) {
        Throwable cause = unwrap(t);
        if (cause instanceof HomaTimeoutException) {
            if (deadline != null && deadline.timeRemaining(TimeUnit.NANOSECONDS) <= DEADLINE_SLACK_NANOS) {
                return Status.DEADLINE_EXCEEDED.withDescription("deadline exceeded over Homa: " + cause.getMessage())
                        .withCause(cause);
            }
            return Status.UNAVAILABLE.withDescription("the Homa peer went silent: " + cause.getMessage()).withCause(cause);
        }
        if (cause instanceof HomaUnknownRpcException || cause instanceof HomaClosedException) {
            return Status.UNAVAILABLE.withDescription(cause.getMessage()).withCause(cause);
        }
        if (cause instanceof io.homa.HomaOutcomeUnknownException) {
            return Status.UNAVAILABLE.withDescription("the Homa server restarted and may have run the call: "
                    + cause.getMessage()).withCause(cause);
        }
        if (cause instanceof io.homa.HomaOverloadedException) {
            return Status.UNAVAILABLE.withDescription("the Homa server refused the call unrun (overloaded): "
                    + cause.getMessage()).withCause(cause);
        }
        if (cause instanceof io.homa.HomaAuthenticationException) {
            // As grpc-netty reports a failed TLS handshake: the server is there but not reachable securely.
            return Status.UNAVAILABLE.withDescription("the Homa key exchange failed: " + cause.getMessage())
                    .withCause(cause);
        }
        if (cause instanceof HomaMessageTooLargeException) {
            return Status.RESOURCE_EXHAUSTED.withDescription(cause.getMessage()).withCause(cause);
        }
        if (cause instanceof HomaException) {
            HomaException.Kind kind = ((HomaException) cause).kind();
            Status base = kind == HomaException.Kind.RESOURCE_LIMIT ? Status.RESOURCE_EXHAUSTED
                    : kind == HomaException.Kind.IO_ERROR ? Status.UNAVAILABLE : Status.INTERNAL;
            return base.withDescription(cause.getMessage()).withCause(cause);
        }
        if (cause instanceof CancellationException) {
            return Status.CANCELLED.withDescription("the Homa RPC was cancelled").withCause(cause);
        }
        return Status.INTERNAL.withDescription("homa-grpc: " + cause).withCause(cause);
    }

    /** The cause inside a future's CompletionException or ExecutionException. */
    static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
