package io.homa.collective;

/**
 * Ranks disagree about the operation: its kind, element type, reduction, length, root or group
 * size. The message says what each side has. Every rank must call the same collectives, with the
 * same arguments (lengths counted in elements), in the same order.
 */
public final class CollectiveMismatchException extends CollectiveException {
    private static final long serialVersionUID = 1L;

    public CollectiveMismatchException(String message) {
        super(message);
    }
}
