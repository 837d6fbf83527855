package io.homa.core.sim;

import io.homa.core.EngineEvent;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Books every RPC of a simulation: what each client sent, what each server was handed (and how
 * often), what came back, and when. Hosts wired with {@link #attach} echo requests and record
 * responses; {@link #assertAllExactlyOnce} checks exactly-once, byte-identical delivery.
 */
public final class RpcLedger {
    /** One RPC as the client saw it. */
    public static final class Call {
        public final SimEndpoint client;
        public final InetSocketAddress server;
        public final long id;
        public final byte[] request;
        public final long startedAt;
        public long finishedAt = -1;
        public EngineEvent outcome;
        int responses;

        Call(SimEndpoint client, InetSocketAddress server, long id, byte[] request, long startedAt) {
            this.client = client;
            this.server = server;
            this.id = id;
            this.request = request;
            this.startedAt = startedAt;
        }

        public long rttNanos() {
            return finishedAt - startedAt;
        }
    }

    private final LongSupplier clock;
    private final Map<String, Call> calls = new HashMap<>();
    private final List<Call> order = new ArrayList<>();
    private final Map<String, Integer> deliveries = new HashMap<>();
    private final java.util.Set<InetSocketAddress> strangers = new java.util.HashSet<>();
    /** Response bytes per request length (null: echo). */
    private java.util.function.IntUnaryOperator responseLength;

    public RpcLedger(SimNetwork net) {
        this(net::now);
    }

    /** A ledger for hosts of any simulated network, {@code clock} giving its virtual time. */
    public RpcLedger(LongSupplier clock) {
        this.clock = clock;
    }

    /** Responses of this length instead of an echo. */
    public RpcLedger responseLength(java.util.function.IntUnaryOperator f) {
        this.responseLength = f;
        return this;
    }

    private static String key(InetSocketAddress client, long id) {
        return client + "#" + id;
    }

    /** Requests from this address are answered but not booked (a hostile peer's). */
    public RpcLedger ignoreRequestsFrom(InetSocketAddress address) {
        strangers.add(address);
        return this;
    }

    /** Makes {@code host} an echo server and records its responses as a client. */
    public void attach(SimEndpoint host) {
        host.onEvent(e -> {
            switch (e.kind()) {
                case REQUEST -> {
                    if (!strangers.contains(e.peer())) {
                        deliveries.merge(key(e.peer(), e.rpcId()), 1, Integer::sum);
                    }
                    byte[] req = e.message().toByteArray();
                    e.message().release();
                    byte[] resp = responseLength == null ? req : new byte[responseLength.applyAsInt(req.length)];
                    host.engine().respond(clock.getAsLong(), e.peer(), e.rpcId(), ByteBuffer.wrap(resp));
                }
                case RESPONSE, FAILED -> {
                    Call c = calls.get(key(host.address(), e.rpcId()));
                    if (c == null) {
                        fail("event for an RPC nobody started: " + e);
                    }
                    c.responses++;
                    if (c.outcome == null) {
                        c.outcome = e;
                        c.finishedAt = clock.getAsLong();
                    } else if (e.message() != null) {
                        e.message().release(); // a second outcome: wrong, and assertAllExactlyOnce says so
                    }
                }
            }
        });
    }

    /** Starts a call now and books it. */
    public Call call(SimEndpoint client, SimEndpoint server, byte[] request) {
        return call(client, server, request, false);
    }

    /** Starts a call now, its request idempotent or not, and books it. */
    public Call call(SimEndpoint client, SimEndpoint server, byte[] request, boolean idempotent) {
        long id = client.call(server.address(), request, idempotent);
        Call c = new Call(client, server.address(), id, request, clock.getAsLong());
        calls.put(key(client.address(), id), c);
        order.add(c);
        return c;
    }

    public List<Call> calls() {
        return order;
    }

    /** Times the server application was handed this call's request. */
    public int deliveries(Call c) {
        return deliveries.getOrDefault(key(c.client.address(), c.id), 0);
    }

    public long completed() {
        return order.stream().filter(c -> c.outcome != null && c.outcome.kind() == EngineEvent.Kind.RESPONSE).count();
    }

    public boolean allFinished() {
        for (Call c : order) {
            if (c.outcome == null) {
                return false;
            }
        }
        return true;
    }

    /**
     * Every call got exactly one outcome, a RESPONSE whose bytes equal the expected response, and
     * its request reached the server application exactly once.
     */
    public void assertAllExactlyOnce() {
        for (Call c : order) {
            assertNotNull(c.outcome, () -> "no outcome for rpc " + c.id + " of " + c.request.length + " B");
            assertEquals(EngineEvent.Kind.RESPONSE, c.outcome.kind(), () -> "rpc " + c.id + ": " + c.outcome);
            assertEquals(1, c.responses, () -> "rpc " + c.id + " answered " + c.responses + " times");
            assertEquals(1, deliveries(c), () -> "request of rpc " + c.id + " delivered " + deliveries(c) + " times");
            byte[] expected = responseLength == null ? c.request : new byte[responseLength.applyAsInt(c.request.length)];
            assertArrayEquals(expected, c.outcome.message().toByteArray(), () -> "rpc " + c.id + " bytes differ");
        }
        assertTrue(deliveries.size() == order.size(), "server saw requests nobody sent: " + deliveries.size());
    }

    /** Gives back the memory of every response kept as an outcome (after the checks that read them). */
    public void releaseOutcomes() {
        for (Call c : order) {
            if (c.outcome != null && c.outcome.message() != null) {
                c.outcome.message().release();
            }
        }
    }

    /** Every engine in the network holds no per-RPC state. */
    public static void assertQuiescent(SimNetwork net) {
        for (SimHost h : net.hosts()) {
            assertTrue(h.engine().isQuiescent(), () -> h.address() + " not quiescent: " + h.engine().describe());
            assertEquals(0, h.engine().bufferedBytes());
        }
    }
}
