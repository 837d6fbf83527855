package io.homa;

/**
 * The socket was closed: a call made after {@link HomaSocket#close()}, or one still in flight when
 * it was closed, fails with this exception.
 */
public class HomaClosedException extends HomaException {
    private static final long serialVersionUID = 1L;

    /** An exception whose message names the call or socket that was closed. */
    public HomaClosedException(String message) {
        super(Kind.SOCKET_CLOSED, message);
    }
}
