package io.homa.internal.rpc;

/**
 * The application's side of a request, as the shell sees it: the socket wraps the user's
 * {@code HomaHandler} in one of these when {@code serve} is called. Internal use only.
 */
@FunctionalInterface
public interface RequestHandler {
    /** Handles {@code r} (on the user-code executor); a throw drops the request. */
    void handle(InboundRequest r) throws Exception;
}
