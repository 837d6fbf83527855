package io.homa.core.sim;

import io.homa.core.EngineEvent;
import io.homa.core.EngineLimitException;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.SplittableRandom;

/**
 * The papers' traffic on a {@link Datacenter}: every host starts RPCs to uniformly chosen other
 * hosts as an open-loop Poisson process; request and response lengths are both drawn from the
 * workload, so every message on the wire is a workload message. Each message is measured one way,
 * as the paper's simulator measures its messages: a request from {@code startRequest} at the
 * client to its REQUEST event at the server, a response from {@code respond} at the server to its
 * RESPONSE event at the client. The rate makes the bytes each host sends (requests and responses,
 * with every header and Ethernet framing) {@code load} of its link on average; grants, acks and
 * other control packets come on top, as in the paper.
 */
public final class DatacenterWorkload {
    /** Hears about every message (on the simulation's thread). */
    public interface Observer {
        /** A message of {@code length} payload bytes was handed to the engine at {@code atNanos}. */
        void offered(int length, long atNanos);

        /** A message arrived whole; {@code idealNanos} is its best time on an idle network. */
        void delivered(int length, int src, int dst, long startNanos, long endNanos, long idealNanos);

        /** An RPC failed (its request or response never arrived), or the engine refused it. */
        void failed(int length, long startNanos);
    }

    private static final class Call {
        final int client;
        final int server;
        final int requestLength;
        final int responseLength;
        final long requestStart;
        boolean requestDelivered;
        long responseStart;

        Call(int client, int server, int requestLength, int responseLength, long requestStart) {
            this.client = client;
            this.server = server;
            this.requestLength = requestLength;
            this.responseLength = responseLength;
            this.requestStart = requestStart;
        }
    }

    private final Datacenter dc;
    private final Workload workload;
    private final Observer observer;
    private final SplittableRandom random;
    private final byte[] payload;
    private final double meanGapNanos;
    private final int segmentPayload;
    private final HashMap<Long, Call>[] calls;
    private long stopAt;
    private long started;

    /**
     * @param load mean fraction of each host's link its sent messages take (headers included)
     */
    @SuppressWarnings("unchecked")
    public DatacenterWorkload(Datacenter dc, Workload workload, double load, long seed, Observer observer) {
        if (!(load > 0 && load <= 2)) {
            throw new IllegalArgumentException("load must be in (0, 2], was " + load);
        }
        this.dc = dc;
        this.workload = workload;
        this.observer = observer;
        this.random = new SplittableRandom(seed);
        this.segmentPayload = dc.host(0).engine().config().segmentPayload();
        this.payload = new byte[workload.maxLength()];
        double meanWire = meanWireBytes(workload, dc.topology(), segmentPayload);
        double bytesPerNano = dc.topology().hostLinkBitsPerSecond / 8e9;
        // Each RPC puts two messages on the wire, one from each host, so each host sends
        // 2 x meanWire per RPC it starts.
        this.meanGapNanos = 2 * meanWire / (load * bytesPerNano);
        int n = dc.topology().hosts;
        this.calls = new HashMap[n];
        for (int i = 0; i < n; i++) {
            calls[i] = new HashMap<>();
            int host = i;
            dc.host(i).onEvent(e -> onEvent(host, e));
        }
        dc.onAppTimer((host, arg) -> arrival(host));
    }

    /** Mean bytes a message of this workload occupies on the wire (by sampling with a fixed seed). */
    public static double meanWireBytes(Workload w, DatacenterTopology topo, int segmentPayload) {
        SplittableRandom r = new SplittableRandom(7);
        int n = 400_000;
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += topo.messageWireBytes(w.sample(r), segmentPayload);
        }
        return sum / n;
    }

    /** Mean time between two RPCs started by one host, ns. */
    public double meanGapNanos() {
        return meanGapNanos;
    }

    /** RPCs started so far. */
    public long started() {
        return started;
    }

    /** Starts every host's arrivals now; none start at or after {@code stopAtNanos}. */
    public void start(long stopAtNanos) {
        this.stopAt = stopAtNanos;
        for (int i = 0; i < calls.length; i++) {
            dc.scheduleApp(dc.now() + gap(), i, 0);
        }
    }

    private long gap() {
        return Math.max(1, Math.round(-Math.log(1 - random.nextDouble()) * meanGapNanos));
    }

    private ByteBuffer payload(int length) {
        return ByteBuffer.wrap(payload, 0, length);
    }

    private void arrival(int client) {
        long now = dc.now();
        if (now >= stopAt) {
            return;
        }
        dc.scheduleApp(now + gap(), client, 0);
        int server = random.nextInt(calls.length - 1);
        if (server >= client) {
            server++;
        }
        Call c = new Call(client, server, workload.sample(random), workload.sample(random), now);
        observer.offered(c.requestLength, now);
        started++;
        long id;
        try {
            id = dc.host(client).call(dc.address(server), payload(c.requestLength));
        } catch (EngineLimitException e) {
            observer.failed(c.requestLength, now);
            return;
        }
        calls[client].put(id, c);
    }

    private void onEvent(int host, EngineEvent e) {
        long now = dc.now();
        switch (e.kind()) {
            case REQUEST -> {
                int client = dc.indexOf(e.peer());
                Call c = client < 0 ? null : calls[client].get(e.rpcId());
                if (c == null || c.requestDelivered) {
                    return; // not ours, or a restarted request delivered again (counted once)
                }
                c.requestDelivered = true;
                observer.delivered(c.requestLength, client, host, c.requestStart, now,
                        dc.topology().idealNanos(client, host, c.requestLength, segmentPayload));
                c.responseStart = now;
                observer.offered(c.responseLength, now);
                try {
                    dc.host(host).engine().respond(now, e.peer(), e.rpcId(), payload(c.responseLength));
                } catch (EngineLimitException refused) {
                    dc.host(host).engine().abandon(now, e.peer(), e.rpcId());
                    observer.failed(c.responseLength, now);
                }
            }
            case RESPONSE -> {
                Call c = calls[host].remove(e.rpcId());
                if (c != null) {
                    observer.delivered(c.responseLength, c.server, host, c.responseStart, now,
                            dc.topology().idealNanos(c.server, host, c.responseLength, segmentPayload));
                }
            }
            case FAILED -> {
                Call c = calls[host].remove(e.rpcId());
                if (c != null) {
                    observer.failed(c.requestDelivered ? c.responseLength : c.requestLength,
                            c.requestDelivered ? c.responseStart : c.requestStart);
                }
            }
        }
    }
}
