package io.homa;

/**
 * Answers requests: set with {@link HomaSocket#serve(HomaHandler)}.
 *
 * <p><b>Thread:</b> by default {@link #handle} runs on the socket's executor (its own pool, or the
 * one given with {@link HomaConfig.Builder#executor}), never on the event loop, so it may block;
 * several requests may be handled at once on different threads. With
 * {@link HomaConfig.Builder#inlineExecution(boolean)} it runs on the event loop and must not
 * block.
 *
 * <p><b>Replying:</b> the handler need not reply before it returns: it may keep the
 * {@link HomaRequest} and call {@link HomaRequest#reply} later from any thread. A request that is
 * never answered is dropped after {@link HomaConfig#requestTimeout()}; a handler that throws has its
 * request dropped at once (the exception is logged). Either way nothing leaks, and the caller
 * fails (with {@link HomaUnknownRpcException}, or {@link HomaTimeoutException} if its deadline
 * comes first): Homa has no error response.
 */
@FunctionalInterface
public interface HomaHandler {
    /**
     * Called at most once per request that arrived complete: not for a request refused because
     * {@link HomaConfig#maxQueuedRequests()} requests already waited for a handler, nor for one
     * dropped (request timeout passed, socket closed) before a handler thread was free.
     */
    void handle(HomaRequest request) throws Exception;
}
