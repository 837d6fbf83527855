package io.homa;

/**
 * A call did not finish in time: either the server stayed silent for the protocol's timeout
 * (it is gone, unreachable, or its host is overloaded) or the call's own deadline passed (see
 * {@link HomaSocket#call(java.net.InetSocketAddress, byte[], java.time.Duration)}). The message
 * says which. The RPC is aborted; a late response is discarded.
 */
public class HomaTimeoutException extends HomaException {
    private static final long serialVersionUID = 1L;

    /** An exception whose message names the call and which time ran out. */
    public HomaTimeoutException(String message) {
        super(Kind.TIMEOUT, message);
    }
}
