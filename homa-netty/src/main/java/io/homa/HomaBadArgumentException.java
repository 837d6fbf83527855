package io.homa;

/**
 * An argument can never work: null, a non-positive deadline, an unresolved address, an
 * out-of-range configuration value. Thrown at once by the method that received it; the message
 * names the argument and the value.
 */
public class HomaBadArgumentException extends HomaException {
    private static final long serialVersionUID = 1L;

    /** An exception whose message names the argument and its value. */
    public HomaBadArgumentException(String message) {
        super(Kind.BAD_ARGUMENT, message);
    }

    /** The same, with the exception that revealed the bad value. */
    public HomaBadArgumentException(String message, Throwable cause) {
        super(Kind.BAD_ARGUMENT, message, cause);
    }
}
