package io.homa.core;

/**
 * The engine refused a command because one of its configured resource limits is reached: the
 * caller gets back-pressure instead of unbounded memory. Thrown by {@link HomaEngine#startRequest}
 * (limits {@code maxRpcs} and {@code maxOutgoingBytes}) and {@link HomaEngine#respond} (limit
 * {@code maxOutgoingBytes}). Nothing changed in the engine: the call may be tried again once RPCs
 * have finished (a refused {@code respond} leaves its request waiting for a response).
 *
 * <p>An I/O shell maps it to back-pressure or to a clear error for the application. It extends
 * {@link IllegalStateException} so that code written before it existed still catches it.
 */
public final class EngineLimitException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final String limit;

    public EngineLimitException(String limit, String message) {
        super(message);
        this.limit = limit;
    }

    /** The {@link EngineConfig} setting that was reached, e.g. {@code "maxOutgoingBytes"}. */
    public String limit() {
        return limit;
    }
}
