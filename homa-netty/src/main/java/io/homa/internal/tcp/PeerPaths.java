package io.homa.internal.tcp;

import io.homa.internal.ShellConfig;
import io.homa.internal.observe.ShellCounter;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * TCP fallback, calling side: which peers this socket calls over TCP, and until when. A peer
 * lands here when a retry of a silent Homa call was answered over TCP; calls to it then go over
 * TCP directly until {@code HomaConfig.fallbackPeriod()} has passed, and the first call after that
 * is a probe: it goes over Homa again, and only its own silence puts the peer back on TCP. Any
 * thread.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class PeerPaths {
    private final Map<InetSocketAddress, Long> tcpUntil = new ConcurrentHashMap<>();
    private final long periodNanos;
    private final AtomicLongArray counters;

    public PeerPaths(ShellConfig config, AtomicLongArray counters) {
        this.periodNanos = config.fallbackPeriod().toNanos();
        this.counters = counters;
    }

    /** Whether a call to {@code peer} goes over TCP now; the call that ends a peer's period is counted as a probe. */
    public boolean useTcp(InetSocketAddress peer) {
        if (tcpUntil.isEmpty()) {
            return false;
        }
        Long until = tcpUntil.get(peer);
        if (until == null) {
            return false;
        }
        if (System.nanoTime() - until < 0) {
            return true;
        }
        if (tcpUntil.remove(peer, until)) {
            counters.incrementAndGet(ShellCounter.PROBES.ordinal());
        }
        return false;
    }

    /** {@code peer} answered over TCP where Homa stayed silent: call it over TCP for a while. */
    public void onTcp(InetSocketAddress peer) {
        tcpUntil.put(peer, System.nanoTime() + periodNanos);
    }

    /** {@code peer} cannot be reached over TCP either: back to Homa, whose timeouts then decide. */
    public void offTcp(InetSocketAddress peer) {
        tcpUntil.remove(peer);
    }

    /** Peers on TCP now (the PEERS_ON_TCP gauge). */
    public int size() {
        long now = System.nanoTime();
        return (int) tcpUntil.values().stream().filter(until -> now - until < 0).count();
    }
}
