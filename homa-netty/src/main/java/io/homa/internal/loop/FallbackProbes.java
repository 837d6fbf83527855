package io.homa.internal.loop;

import io.homa.internal.ShellConfig;
import io.homa.internal.observe.ShellCounter;
import io.homa.internal.rpc.ClientCall;
import io.homa.internal.tcp.TcpClient;
import io.homa.internal.tcp.TcpFrames;
import io.netty.buffer.ByteBuf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The TCP fallback's part of one engine loop (docs/deployment.md). Calling side: each call handed
 * to the engine gets a probe; if its server sent no Homa packet at all by the probe interval,
 * Homa does not reach it, and the call is retried over TCP naming its Homa RPC. Serving side: the
 * requests received over Homa are remembered, so that a TCP retry of one of them is refused
 * ({@link #claimForTcp}). On the loop unless a method says otherwise.
 */
final class FallbackProbes {
    private static final Logger log = LoggerFactory.getLogger(FallbackProbes.class);

    private final EngineLoop l;
    private final Duration probeInterval;
    private final long probeNanos;
    /**
     * For each peer with Homa calls of ours in flight: {calls, when a datagram from it last came}.
     * A call is retried over TCP only if its peer stayed silent.
     */
    private final Map<InetSocketAddress, long[]> heard = new HashMap<>();
    /** Requests received over Homa, remembered against TCP retries. */
    private final DroppedRequests delivered;

    FallbackProbes(EngineLoop loop, ShellConfig config) {
        this.l = loop;
        this.probeInterval = config.probeInterval();
        this.probeNanos = probeInterval.toNanos();
        this.delivered = new DroppedRequests(TcpFrames.retryWindowNanos(config));
    }

    /** A datagram came from {@code from}: its calls are not retried over TCP. */
    void heardFrom(InetSocketAddress from) {
        if (!heard.isEmpty()) {
            long[] w = heard.get(from);
            if (w != null) {
                w[1] = System.nanoTime();
            }
        }
    }

    /** Arms the probe of a call just handed to the engine: silence from its peer until then means TCP. */
    void watch(ClientCall<?> c) {
        long now = System.nanoTime();
        ClientCall.Fallback f = c.fallback;
        if (f == null) {
            f = c.fallback = new ClientCall.Fallback();
        }
        f.launchedAt = now;
        heard.computeIfAbsent(c.server, k -> new long[]{0, now - Long.MAX_VALUE / 4})[0]++;
        f.probe = l.loop.schedule(() -> l.locked(() -> probeExpired(c)), probeNanos, TimeUnit.NANOSECONDS);
    }

    /** A call left the engine: its peer is watched no longer once it has no other call. */
    void unwatch(ClientCall<?> c) {
        long[] w = heard.get(c.server);
        if (w != null && --w[0] == 0) {
            heard.remove(c.server);
        }
    }

    /** A request from {@code client} was received over Homa. */
    void delivered(long now, InetSocketAddress client, long rpcId) {
        delivered.add(now, client, rpcId);
    }

    /**
     * A call's probe interval passed. If its peer sent nothing since the call started, Homa does
     * not reach it: retry the call over TCP, naming its Homa RPC so that the server runs it only if
     * it did not get it over Homa. The Homa RPC goes on until the TCP answer comes.
     */
    private void probeExpired(ClientCall<?> c) {
        ClientCall.Fallback f = c.fallback;
        f.probe = null;
        if (l.isClosed() || l.calls.get(c.rpcId) != c) {
            return;
        }
        long[] w = heard.get(c.server);
        if (w != null && w[1] - f.launchedAt > 0) {
            return; // the peer answers Homa: never TCP
        }
        l.count(ShellCounter.FALLBACKS);
        log.debug("{}: no Homa packet from its server within {}; retrying over TCP", c, probeInterval);
        ByteBuf body = c.requestForTcp();
        l.socket.tcpClient().send(c.server, c.rpcId, System.nanoTime() - f.launchedAt, body)
                .whenComplete((reply, error) -> l.runOnLoop(() -> retried(c, reply, error)));
    }

    /** The TCP retry of {@code c} ended: with the server's answer, or {@code error}. */
    private void retried(ClientCall<?> c, TcpFrames.Reply reply, Throwable error) {
        if (error != null) {
            log.debug("{}: TCP retry failed ({}); the call goes on over Homa", c, error.toString());
            l.socket.peers().offTcp(c.server);
            return;
        }
        if (reply.status() == TcpFrames.REFUSED) {
            // The request got there over Homa: the way back may still work (a slow start), so the
            // peer goes on TCP only if this call then times out (see ClientCalls.onFailed).
            l.count(ShellCounter.FALLBACKS_REFUSED);
            c.fallback.refused = true;
            log.debug("{}: TCP retry refused ({}); the call goes on over Homa", c, reply.reason());
            return;
        }
        l.socket.peers().onTcp(c.server); // it answers TCP where Homa stayed silent
        if (l.isClosed() || l.calls.get(c.rpcId) != c) {
            return; // finished meanwhile (its server ran it over TCP only: Homa's copy is dropped there)
        }
        l.calls.removeCall(c.rpcId);
        l.calls.endTimers(c);
        l.engine.abort(System.nanoTime(), c.rpcId); // releases the payload through the engine
        TcpClient tcp = l.socket.tcpClient();
        RuntimeException failure = tcp.failure(c, reply);
        if (failure == null) {
            l.count(ShellCounter.CALLS_SUCCEEDED);
            if (l.socket.forget(c)) {
                l.dispatcher.execute(() -> TcpClient.complete(c, reply, null));
            }
        } else {
            l.calls.fail(c, failure);
        }
        l.calls.releaseSlot(c.server);
        l.drain();
    }

    /**
     * Serving side (any thread): may the TCP retry of {@code client}'s Homa RPC {@code rpcId} run?
     * Not if this loop received that request over Homa; if it may, a Homa copy arriving later is
     * dropped.
     */
    CompletableFuture<Boolean> claimForTcp(InetSocketAddress client, long rpcId) {
        CompletableFuture<Boolean> claimed = new CompletableFuture<>();
        l.runOnLoop(() -> {
            long now = System.nanoTime();
            if (l.isClosed() || delivered.contains(now, client, rpcId)) {
                claimed.complete(false);
            } else {
                l.requests.claimedElsewhere(now, client, rpcId);
                claimed.complete(true);
            }
        });
        return claimed;
    }
}
