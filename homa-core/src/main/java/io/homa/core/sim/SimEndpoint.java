package io.homa.core.sim;

import io.homa.core.EngineEvent;
import io.homa.core.HomaEngine;

import java.net.InetSocketAddress;
import java.util.function.Consumer;

/**
 * A simulated host as an application sees it, whichever simulated network it is on
 * ({@link SimNetwork}'s single switch or a {@link Datacenter}): its address, its engine, where its
 * events go, and how it starts an RPC. All on the simulation's thread, at virtual time.
 */
public interface SimEndpoint {
    InetSocketAddress address();

    HomaEngine engine();

    /** Where this host's events go (called at the event's virtual time). */
    void onEvent(Consumer<EngineEvent> handler);

    /** Starts an RPC to {@code server} now and sends what may be sent; returns its id. */
    long call(InetSocketAddress server, byte[] request);

    /** Starts an RPC now, its request idempotent or not (see {@code HomaEngine.startRequest}); returns its id. */
    long call(InetSocketAddress server, byte[] request, boolean idempotent);
}
