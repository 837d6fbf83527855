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
    /** The authenticated peer's identity (a secured socket's), else null. */
    private final String peerIdentity;
    /** Where the peer's TLS session is (mutual TLS), else null. */
    private final io.homa.internal.tls.PeerKeys keys;
    /** The TLS session of the connection the request came over (TCP fallback), else null. */
    private final javax.net.ssl.SSLSession connection;

    ServerRequest(Path path, long rpcId, InetSocketAddress peer, ReceivedMessage message, int maxLength,
                  String peerIdentity, io.homa.internal.tls.PeerKeys keys, javax.net.ssl.SSLSession connection) {
        super(path, rpcId, peer, message, maxLength);
        this.peerIdentity = peerIdentity;
        this.keys = keys;
        this.connection = connection;
    }

    @Override
    public String peerIdentity() {
        return peerIdentity;
    }

    @Override
    public javax.net.ssl.SSLSession tlsSession() {
        if (connection != null) {
            return connection;
        }
        return keys == null ? null : keys.tlsSession(peer());
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
