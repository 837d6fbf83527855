package io.homa.core.sim;

import io.homa.core.EngineConfig;
import io.homa.core.EngineEvent;
import io.homa.core.HomaEngine;
import io.homa.core.Transmit;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.function.Consumer;

/**
 * A host of a {@link Datacenter}: one real Homa engine and the glue an I/O shell provides. It
 * hands arriving frames and timer calls to the engine, puts the engine's transmits on its NIC
 * port (copied into pooled frames), and gives events to the application's handler.
 */
public final class DatacenterHost implements SimEndpoint {
    private final Datacenter dc;
    private final int index;
    private final InetSocketAddress address;
    private final HomaEngine engine;
    private final ByteBuffer txBuffer;
    private final byte[] txArray;
    private Consumer<EngineEvent> handler = e -> { };
    private long timerAt = Long.MAX_VALUE;

    DatacenterHost(Datacenter dc, int index, InetSocketAddress address, EngineConfig config, long seed) {
        this.dc = dc;
        this.index = index;
        this.address = address;
        this.engine = new HomaEngine(config, seed);
        this.txArray = new byte[config.maxDatagram() * config.maxGsoSegments];
        this.txBuffer = ByteBuffer.wrap(txArray);
    }

    public int index() {
        return index;
    }

    @Override
    public InetSocketAddress address() {
        return address;
    }

    @Override
    public HomaEngine engine() {
        return engine;
    }

    @Override
    public void onEvent(Consumer<EngineEvent> handler) {
        this.handler = handler;
    }

    /** Where this host's events go now (a driver that adds its own RPCs passes the others on to it). */
    public Consumer<EngineEvent> handler() {
        return handler;
    }

    @Override
    public long call(InetSocketAddress server, byte[] request) {
        return call(server, ByteBuffer.wrap(request));
    }

    @Override
    public long call(InetSocketAddress server, byte[] request, boolean idempotent) {
        long id = engine.startRequest(dc.now(), server, ByteBuffer.wrap(request), 0, idempotent);
        pump();
        return id;
    }

    /** Starts an RPC with {@code request} (read until the RPC ends: do not change it). */
    public long call(InetSocketAddress server, ByteBuffer request) {
        long id = engine.startRequest(dc.now(), server, request);
        pump();
        return id;
    }

    /** Answers a request (from the event handler or later). */
    public boolean respond(InetSocketAddress client, long rpcId, ByteBuffer response) {
        boolean ok = engine.respond(dc.now(), client, rpcId, response);
        pump();
        return ok;
    }

    void receive(int frameId, Datacenter.Frame f) {
        f.view.clear().limit(f.length);
        engine.onDatagram(dc.now(), dc.address(f.src), f.view);
        dc.freeFrame(frameId);
        pump();
    }

    void timer() {
        if (timerAt > dc.now()) {
            return; // superseded: an earlier timer ran and re-armed later (or nothing is armed)
        }
        timerAt = Long.MAX_VALUE;
        engine.onTimer(dc.now());
        pump();
    }

    /** Drains the engine's events and transmits and re-arms its timer. */
    public void pump() {
        long now = dc.now();
        do {
            EngineEvent e;
            while ((e = engine.pollEvent()) != null) {
                handler.accept(e);
            }
            while (true) {
                txBuffer.clear();
                Transmit t = engine.pollTransmit(now, txBuffer);
                if (t == null) {
                    break;
                }
                int dst = dc.indexOf(t.destination());
                if (dst < 0) {
                    continue; // no such host: the datagram is lost
                }
                int pos = 0;
                for (int i = 0; i < t.segments(); i++) {
                    int len = Math.min(t.segmentSize(), t.length() - pos);
                    dc.enqueueAtNic(index, dc.newFrame(index, dst, t.priority(), txArray, pos, len));
                    pos += len;
                }
            }
        } while (engine.hasEvents()); // handlers may have called back into the engine
        long deadline = engine.nextDeadline();
        if (deadline < timerAt) {
            timerAt = Math.max(deadline, now + 1);
            dc.scheduleTimer(timerAt, index);
        }
    }
}
