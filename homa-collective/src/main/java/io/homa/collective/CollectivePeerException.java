package io.homa.collective;

/** A message to {@link #rank()} failed: the transport could not deliver it, or the peer refused it. */
public final class CollectivePeerException extends CollectiveException {
    private static final long serialVersionUID = 1L;
    private final int rank;

    public CollectivePeerException(int rank, String message, Throwable cause) {
        super(message, cause);
        this.rank = rank;
    }

    /** The peer's rank. */
    public int rank() {
        return rank;
    }
}
