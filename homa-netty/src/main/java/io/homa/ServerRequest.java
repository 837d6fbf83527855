package io.homa;

import io.homa.core.ReceivedMessage;
import io.homa.internal.Failure;
import io.homa.internal.rpc.InboundRequest;

import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * The {@link HomaRequest} a handler receives: the shell's {@link InboundRequest}, whose public
 * methods already are the interface's, so a request costs one object. The shell makes it through
 * a lambda over this constructor (its {@link InboundRequest.Factory}).
 */
final class ServerRequest extends InboundRequest implements HomaRequest {
    /** The authenticated peer's identity (a secured socket's), else null. Its TLS session is the path's. */
    private final String peerIdentity;

    ServerRequest(Path path, long rpcId, InetSocketAddress peer, ReceivedMessage message, String peerIdentity) {
        super(path, rpcId, peer, message);
        this.peerIdentity = peerIdentity;
    }

    @Override
    public String peerIdentity() {
        return peerIdentity;
    }

    @Override
    public javax.net.ssl.SSLSession tlsSession() {
        return pathTlsSession();
    }

    @Override
    public Duration timeRemaining() {
        return Duration.ofNanos(remainingNanos());
    }

    @Override
    public long deadlineNanoTime() {
        return deadline;
    }

    @Override
    protected RuntimeException failure(Failure kind, String message) {
        return Errors.create(kind, message, null);
    }
}
