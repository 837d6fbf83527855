package io.homa;

/**
 * The server kept saying it does not know this RPC, even after the request was sent again the
 * configured number of times. Typical causes: the server restarted, or its handler failed (threw,
 * or never replied within the server's request timeout) so the server dropped the request.
 */
public class HomaUnknownRpcException extends HomaException {
    private static final long serialVersionUID = 1L;

    /** An exception whose message names the call and the server that did not know it. */
    public HomaUnknownRpcException(String message) {
        super(Kind.UNKNOWN_RPC, message);
    }
}
