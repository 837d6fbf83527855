package io.homa;

/**
 * A secured socket ({@link HomaSecurity#mutualTls}) could not agree keys with the peer, so nothing
 * was sent: the peer's certificate was not trusted (or it refused ours), the peer is not a secured
 * Homa socket, or its key exchange broke off. The message says which peer and why; the cause is
 * the TLS layer's exception where there was one. Retrying helps only once the trust or the
 * certificates are fixed.
 */
public class HomaAuthenticationException extends HomaException {
    private static final long serialVersionUID = 1L;

    /** An exception whose message names the peer and what went wrong; {@code cause} may be null. */
    public HomaAuthenticationException(String message, Throwable cause) {
        super(Kind.AUTHENTICATION_FAILED, message, cause);
    }
}
