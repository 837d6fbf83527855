package io.homa.core.sim;

import io.homa.core.EngineConfig;
import io.homa.core.EngineEvent;
import io.homa.core.HomaEngine;
import io.homa.core.Transmit;
import io.homa.core.psp.PspDrop;
import io.homa.core.psp.PspFormat;
import io.homa.core.psp.PspMasterKeys;
import io.homa.core.psp.PspOpener;
import io.homa.core.psp.PspReceiveState;
import io.homa.core.psp.PspSealer;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * A simulated host: one Homa engine, its NIC (a FIFO uplink at the link rate) and the glue that a
 * real I/O shell provides: it feeds arriving datagrams and timer calls to the engine, drains the
 * engine's transmits onto the uplink, and hands events to the application's handler.
 */
public final class SimHost implements SimEndpoint {
    /** How long every host has been up when the simulation starts (a restart starts afresh). */
    static final long UP_BEFORE_START_NANOS = 1_000_000_000L;
    private final SimNetwork net;
    private final InetSocketAddress address;
    private final EngineConfig config;
    private HomaEngine engine;
    private int restarts;
    private final long seed;
    final PriorityPort downlink;
    private final ByteBuffer txBuffer;
    private final ArrayDeque<SimPacket> uplink = new ArrayDeque<>();
    private boolean uplinkBusy;
    private long uplinkQueuedBytes;
    private long maxUplinkQueuedBytes;
    private long timerAt = Long.MAX_VALUE;
    private long timerLateNanos;
    private Consumer<EngineEvent> handler = e -> { };
    boolean connected = true;
    /** The security layer, as a secured socket's shell has it (null: plain). */
    private PspSealer sealer;
    private PspOpener opener;
    private final long[] securityDrops = new long[PspDrop.values().length];

    SimHost(SimNetwork net, InetSocketAddress address, EngineConfig config, long seed, PriorityPort downlink) {
        this.net = net;
        this.address = address;
        this.config = config;
        this.seed = seed;
        this.engine = new HomaEngine(config, seed);
        // Hosts have been up a while when the simulation starts, as servers are before their clients
        // call: an RPC made at time 0 is not one an earlier incarnation may have had.
        engine.startReceiving(net.now() - UP_BEFORE_START_NANOS);
        this.downlink = downlink;
        this.txBuffer = ByteBuffer.allocate(config.maxDatagram() * config.maxGsoSegments);
    }

    public InetSocketAddress address() {
        return address;
    }

    public HomaEngine engine() {
        return engine;
    }

    /** Where this host's events go (called on the simulation's thread, at the event's time). */
    public void onEvent(Consumer<EngineEvent> handler) {
        this.handler = handler;
    }

    /** Answers every request with its own bytes, at once. */
    public void serveEcho() {
        onEvent(e -> {
            if (e.kind() == EngineEvent.Kind.REQUEST) {
                engine.respond(net.now(), e.peer(), e.rpcId(), ByteBuffer.wrap(e.message().toByteArray()));
                pump();
            }
        });
    }

    /** Starts an RPC now; returns its id. */
    public long call(SimHost server, byte[] request) {
        return call(server.address, request);
    }

    public long call(InetSocketAddress server, byte[] request) {
        return call(server, request, false);
    }

    @Override
    public long call(InetSocketAddress server, byte[] request, boolean idempotent) {
        long id = engine.startRequest(net.now(), server, ByteBuffer.wrap(request), 0, idempotent);
        pump();
        return id;
    }

    /** Answers a request (from a handler or later). */
    public boolean respond(InetSocketAddress client, long rpcId, byte[] response) {
        boolean ok = engine.respond(net.now(), client, rpcId, ByteBuffer.wrap(response));
        pump();
        return ok;
    }

    public boolean abort(long rpcId) {
        boolean ok = engine.abort(net.now(), rpcId);
        pump();
        return ok;
    }

    /**
     * The process restarts: a fresh engine with no memory of earlier RPCs (same address), as when
     * a server crashes and comes back on the same port. The event handler stays.
     */
    public void restart() {
        engine = new HomaEngine(config, seed + 1_000_003L * ++restarts);
        engine.startReceiving(net.now());
        timerAt = Long.MAX_VALUE;
        connected = true;
    }

    /**
     * Every timer of this host fires {@code nanos} after the deadline the engine asked for, as on a
     * busy machine whose event loop wakes up late (0, the default: on time).
     */
    public void lateTimers(long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("timer lateness must be >= 0, was " + nanos);
        }
        this.timerLateNanos = nanos;
    }

    /** Cuts the host off: packets to it are lost and it sends nothing (a crashed machine). */
    public void disconnect() {
        connected = false;
    }

    public boolean connected() {
        return connected;
    }

    /** Most bytes ever queued in this host's NIC (uplink). */
    public long maxUplinkQueuedBytes() {
        return maxUplinkQueuedBytes;
    }

    /** Most bytes ever queued at this host's switch port (downlink). */
    public long maxDownlinkQueuedBytes() {
        return downlink.maxQueuedBytes;
    }

    /**
     * Seals every datagram this host sends and opens every one it receives with {@code keys}, as
     * a secured socket does (the security layer between the engine and the datagrams; the engine
     * does not change). SPIs and IVs come from {@code seed}, so the run repeats. A datagram that
     * does not open is dropped and counted ({@link #securityDrops}) and never reaches the engine.
     */
    public void secure(PspMasterKeys keys, long seed) {
        java.util.Random random = new java.util.Random(seed);
        this.sealer = new PspSealer(keys, random, () -> 1 + (random.nextLong() >>> 8));
        this.opener = new PspOpener(new PspReceiveState(keys));
    }

    /** Datagrams the security layer refused for {@code reason} (zero on a plain host). */
    public long securityDrops(PspDrop reason) {
        return securityDrops[reason.ordinal()];
    }

    void receive(SimPacket p) {
        if (!connected) {
            return;
        }
        ByteBuffer datagram = ByteBuffer.wrap(p.bytes);
        if (opener != null) {
            ByteBuffer plain = ByteBuffer.allocate(p.bytes.length);
            PspDrop refused = opener.open(datagram, 0, p.bytes.length, plain);
            if (refused != null) {
                securityDrops[refused.ordinal()]++;
                return;
            }
            datagram = plain.flip();
        }
        engine.onDatagram(net.now(), p.source, datagram);
        pump();
    }

    /** Drains events and transmits from the engine and re-arms its timer. */
    public void pump() {
        if (!connected) {
            return;
        }
        EngineEvent e;
        while ((e = engine.pollEvent()) != null) {
            handler.accept(e);
        }
        long now = net.now();
        while (true) {
            txBuffer.clear();
            Transmit t = engine.pollTransmit(now, txBuffer);
            if (t == null) {
                break;
            }
            int pos = 0;
            for (int i = 0; i < t.segments(); i++) {
                int len = Math.min(t.segmentSize(), t.length() - pos);
                byte[] bytes;
                if (sealer != null) {
                    bytes = new byte[len + PspFormat.OVERHEAD];
                    sealer.seal(txBuffer, pos, len, ByteBuffer.wrap(bytes));
                } else {
                    bytes = new byte[len];
                    txBuffer.get(pos, bytes);
                }
                pos += len;
                enqueueUplink(new SimPacket(address, t.destination(), bytes, t.priority(),
                        net.settings().ipUdpOverhead));
            }
        }
        // Events may have been produced by handlers calling back into the engine.
        if (engine.hasEvents()) {
            pump();
            return;
        }
        armTimer();
    }

    private void armTimer() {
        long deadline = engine.nextDeadline();
        if (deadline == Long.MAX_VALUE || deadline >= timerAt) {
            return;
        }
        timerAt = deadline;
        long at = Math.max(deadline, net.now() + 1) + timerLateNanos;
        net.schedule(at, () -> {
            if (timerAt != deadline) {
                return; // superseded by an earlier timer
            }
            timerAt = Long.MAX_VALUE;
            if (!connected) {
                return;
            }
            engine.onTimer(net.now());
            pump();
        });
    }

    private void enqueueUplink(SimPacket p) {
        uplink.add(p);
        uplinkQueuedBytes += p.wireBytes;
        maxUplinkQueuedBytes = Math.max(maxUplinkQueuedBytes, uplinkQueuedBytes);
        if (!uplinkBusy) {
            drainUplink();
        }
    }

    private void drainUplink() {
        SimPacket p = uplink.poll();
        if (p == null) {
            uplinkBusy = false;
            return;
        }
        uplinkBusy = true;
        uplinkQueuedBytes -= p.wireBytes;
        long done = net.now() + net.serializationNanos(p.wireBytes);
        net.schedule(done, () -> {
            if (connected) {
                net.schedule(net.now() + net.settings().linkLatencyNanos, () -> net.arriveAtSwitch(p));
            }
            drainUplink();
        });
    }
}
