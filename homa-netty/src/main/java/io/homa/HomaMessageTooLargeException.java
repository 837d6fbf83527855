package io.homa;

/**
 * A request or response is longer than {@link HomaConfig#maxMessageLength()}. Thrown at once by
 * {@code call} and {@code reply}; nothing is sent. (A peer that sends us a longer message is not
 * told: its datagrams are dropped and counted, and its call times out.)
 */
public class HomaMessageTooLargeException extends HomaException {
    private static final long serialVersionUID = 1L;

    /** An exception whose message names the message, its length and the limit. */
    public HomaMessageTooLargeException(String message) {
        super(Kind.MESSAGE_TOO_LARGE, message);
    }
}
