package io.homa;

/**
 * The server refused the request because its handlers were too far behind: more requests were
 * waiting for a handler than its {@link HomaConfig#maxQueuedRequests()}, or the work queued before
 * it would have taken most of the time its caller had left (the queue's delay management), or its
 * time ran out while it waited (the caller's deadline, which the server takes to end a little
 * early: by 2% of the time left, from 1 to 100 ms, or more while its event loop runs late; or the
 * server's {@link HomaConfig#requestTimeout()}). The server did not
 * run the handler for it, so calling again later (after a back-off) or elsewhere is safe even for
 * a request that is not idempotent.
 */
public class HomaOverloadedException extends HomaException {
    private static final long serialVersionUID = 1L;

    /** An exception whose message names the call and the server that refused it. */
    public HomaOverloadedException(String message) {
        super(Kind.OVERLOADED, message);
    }
}
