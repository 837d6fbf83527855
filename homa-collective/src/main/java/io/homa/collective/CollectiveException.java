package io.homa.collective;

/**
 * A collective operation failed on this rank. The subclasses say why: {@link CollectiveTimeoutException}
 * (a rank did not take part before the deadline: dead, stalled or unreachable),
 * {@link CollectiveMismatchException} (ranks called different operations or lengths),
 * {@link CollectivePeerException} (a peer could not be reached or refused a message). A plain
 * {@code CollectiveException} means the group was closed. The operation's buffers then hold
 * unspecified contents.
 */
public class CollectiveException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public CollectiveException(String message) {
        super(message);
    }

    public CollectiveException(String message, Throwable cause) {
        super(message, cause);
    }
}
