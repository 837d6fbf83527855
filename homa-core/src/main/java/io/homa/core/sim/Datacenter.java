package io.homa.core.sim;

import io.homa.core.EngineConfig;
import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * A deterministic, event-driven simulation of a {@link DatacenterTopology} in virtual time, each
 * host running a real {@link io.homa.core.HomaEngine}. Packets are pooled frames moved between
 * {@link EgressPort}s by an {@link EventQueue} of primitive events, so that a packet's journey
 * allocates nothing once the pools have grown. The same seed gives the same run.
 *
 * <p>Nodes: hosts {@code 0..H-1}, ToR switches {@code H..H+R-1}, aggregation switches after them.
 * Ports: each host's NIC, each ToR's port down to each of its hosts, each ToR's uplink to each
 * aggregation switch, each aggregation switch's link down to each ToR.
 */
public final class Datacenter {
    static final int ARRIVE = 0;
    static final int PORT_FREE = 1;
    static final int TIMER = 2;
    static final int APP = 3;
    static final int TASK = 4;

    /** Receives the application timers scheduled with {@link #scheduleApp}. */
    public interface AppTimer {
        void fire(int host, int arg);
    }

    /** One datagram in flight (pooled). */
    static final class Frame {
        final byte[] bytes;
        final ByteBuffer view;
        int length;
        int wireBytes;
        int src;
        int dst;
        int priority;

        Frame(int capacity) {
            bytes = new byte[capacity];
            view = ByteBuffer.wrap(bytes);
        }
    }

    private final DatacenterTopology topo;
    private final EventQueue queue = new EventQueue();
    private final SplittableRandom random;
    private final DatacenterHost[] hosts;
    private final Map<InetSocketAddress, Integer> hostIndex = new HashMap<>();
    private final EgressPort[] ports;
    private final int hostCount;
    private final int racks;
    private final int aggs;
    private Frame[] frames = new Frame[1024];
    private int frameCount;
    private int[] freeFrames = new int[1024];
    private int freeCount;
    private final int frameCapacity;
    private AppTimer appTimer = (h, a) -> { };
    private Runnable[] tasks = new Runnable[64];
    private int taskCount;
    private int[] freeTasks = new int[64];
    private int freeTaskCount;
    private long now;
    private long eventsRun;
    private long packetsDelivered;
    private long dataPayloadDelivered;

    /**
     * @param config every host's engine configuration (each engine gets its own seed from {@code seed})
     */
    public Datacenter(DatacenterTopology topology, EngineConfig config, long seed) {
        this.topo = topology;
        this.random = new SplittableRandom(seed);
        this.hostCount = topology.hosts;
        this.racks = topology.racks;
        this.aggs = topology.aggregationSwitches();
        this.frameCapacity = config.maxDatagram();
        int levels = topology.priorityLevels;
        long buf = topology.portBufferBytes;
        int h = hostCount;
        ports = new EgressPort[2 * h + 2 * racks * aggs];
        for (int i = 0; i < h; i++) {
            ports[i] = new EgressPort(levels, topology.hostLinkBitsPerSecond, topology.uplinkLatencyNanos(),
                    h + topology.rackOf(i), buf);
            ports[h + i] = new EgressPort(levels, topology.hostLinkBitsPerSecond, topology.downlinkLatencyNanos(), i, buf);
        }
        for (int r = 0; r < racks; r++) {
            for (int a = 0; a < aggs; a++) {
                ports[torUp(r, a)] = new EgressPort(levels, topology.fabricLinkBitsPerSecond,
                        topology.switchDelayNanos, h + racks + a, buf);
                ports[aggDown(a, r)] = new EgressPort(levels, topology.fabricLinkBitsPerSecond,
                        topology.switchDelayNanos, h + r, buf);
            }
        }
        hosts = new DatacenterHost[h];
        for (int i = 0; i < h; i++) {
            InetSocketAddress address = addressOf(i);
            hosts[i] = new DatacenterHost(this, i, address, config, seed * 31 + i + 1);
            hostIndex.put(address, i);
        }
    }

    /**
     * The engine configuration a user gets on this topology's host links: the defaults, with the
     * link rate set and the unscheduled bytes and grant budget scaled to it as {@code HomaConfig}
     * scales them for a link slower than 25 Gbit/s (a round trip's worth and ten of them). The
     * pacer keeps its 5 us NIC allowance: in virtual time no timer is ever late.
     */
    public static EngineConfig engineConfigFor(DatacenterTopology topology) {
        EngineConfig d = EngineConfig.defaults();
        long mbps = topology.hostLinkBitsPerSecond / 1_000_000;
        double scale = Math.min(1.0, (double) mbps / d.linkMbps);
        int segment = d.segmentPayload();
        return d.toBuilder()
                .linkMbps(mbps)
                .unscheduledBytes(Math.max(segment, (int) (d.unscheduledBytes * scale)))
                .maxIncoming(Math.max(10 * segment, (int) (d.maxIncoming * scale)))
                .build();
    }

    private static InetSocketAddress addressOf(int i) {
        try {
            return new InetSocketAddress(InetAddress.getByAddress(
                    new byte[]{10, (byte) (i >> 16), (byte) (i >> 8), (byte) i}), 4000);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    private int torUp(int rack, int agg) {
        return 2 * hostCount + rack * aggs + agg;
    }

    private int aggDown(int agg, int rack) {
        return 2 * hostCount + racks * aggs + agg * racks + rack;
    }

    public DatacenterTopology topology() {
        return topo;
    }

    public DatacenterHost host(int i) {
        return hosts[i];
    }

    public List<DatacenterHost> hosts() {
        return Arrays.asList(hosts);
    }

    /** The host with this address, or -1. */
    public int indexOf(InetSocketAddress address) {
        Integer i = hostIndex.get(address);
        return i == null ? -1 : i;
    }

    /** Current virtual time, ns. */
    public long now() {
        return now;
    }

    public long eventsRun() {
        return eventsRun;
    }

    public long packetsDelivered() {
        return packetsDelivered;
    }

    /**
     * Payload bytes of DATA packets delivered to hosts so far (retransmitted bytes count again): the
     * network's goodput, at packet granularity.
     */
    public long dataPayloadDelivered() {
        return dataPayloadDelivered;
    }

    /** Packets dropped at full port buffers. */
    public long packetsDropped() {
        long d = 0;
        for (EgressPort p : ports) {
            d += p.drops;
        }
        return d;
    }

    /** Most bytes ever queued at one port, by kind: host NIC, ToR to host, ToR up, aggregation down. */
    public long[] maxQueuedBytes() {
        long[] m = new long[4];
        for (int i = 0; i < ports.length; i++) {
            int kind = i < hostCount ? 0 : i < 2 * hostCount ? 1 : i < 2 * hostCount + racks * aggs ? 2 : 3;
            m[kind] = Math.max(m[kind], ports[i].maxQueuedBytes);
        }
        return m;
    }

    /** Where application timers go. */
    public void onAppTimer(AppTimer timer) {
        this.appTimer = timer;
    }

    /** Calls the {@link AppTimer} at virtual time {@code at} with ({@code host}, {@code arg}). */
    public void scheduleApp(long at, int host, int arg) {
        queue.add(Math.max(at, now), APP, host, arg);
    }

    /**
     * Runs {@code task} at virtual time {@code at} on the simulation's thread: for drivers that
     * need timers of their own beside an {@link AppTimer} (a collective's deadlines).
     */
    public void schedule(long at, Runnable task) {
        int slot;
        if (freeTaskCount > 0) {
            slot = freeTasks[--freeTaskCount];
        } else {
            if (taskCount == tasks.length) {
                tasks = Arrays.copyOf(tasks, tasks.length * 2);
                freeTasks = Arrays.copyOf(freeTasks, tasks.length);
            }
            slot = taskCount++;
        }
        tasks[slot] = task;
        queue.add(Math.max(at, now), TASK, -1, slot);
    }

    private void runTask(int slot) {
        Runnable task = tasks[slot];
        tasks[slot] = null;
        freeTasks[freeTaskCount++] = slot;
        task.run();
    }

    void scheduleTimer(long at, int host) {
        queue.add(Math.max(at, now), TIMER, host, 0);
    }

    /** Runs every event up to virtual time {@code end}; the clock then reads {@code end}. */
    public void runUntil(long end) {
        EventQueue q = queue;
        while (!q.isEmpty() && q.peekTime() <= end) {
            q.poll();
            now = q.polledTime;
            eventsRun++;
            switch (q.polledKind) {
                case ARRIVE -> arrive(q.polledA, q.polledB);
                case PORT_FREE -> portFree(q.polledA);
                case TIMER -> hosts[q.polledA].timer();
                case TASK -> runTask(q.polledB);
                default -> appTimer.fire(q.polledA, q.polledB);
            }
        }
        now = Math.max(now, end);
    }

    /** Whether nothing at all is scheduled (no packet, timer or application event). */
    public boolean idle() {
        return queue.isEmpty();
    }

    // ------------------------------------------------------------------ frames

    /** A frame from the pool holding {@code len} bytes of {@code src} from {@code offset}. */
    int newFrame(int srcHost, int dstHost, int priority, byte[] src, int offset, int len) {
        int id;
        if (freeCount > 0) {
            id = freeFrames[--freeCount];
        } else {
            if (frameCount == frames.length) {
                frames = Arrays.copyOf(frames, frameCount * 2);
            }
            id = frameCount;
            frames[frameCount++] = new Frame(frameCapacity);
        }
        Frame f = frames[id];
        System.arraycopy(src, offset, f.bytes, 0, len);
        f.length = len;
        f.wireBytes = topo.wireBytes(len);
        f.src = srcHost;
        f.dst = dstHost;
        f.priority = priority;
        return id;
    }

    Frame frame(int id) {
        return frames[id];
    }

    void freeFrame(int id) {
        if (freeCount == freeFrames.length) {
            freeFrames = Arrays.copyOf(freeFrames, freeCount * 2);
        }
        freeFrames[freeCount++] = id;
    }

    InetSocketAddress address(int host) {
        return hosts[host].address();
    }

    // ------------------------------------------------------------------ the fabric

    /** Puts a frame into an output port: on the wire at once if the port is idle, else queued. */
    void enqueue(EgressPort port, int portIndex, int frameId) {
        Frame f = frames[frameId];
        if (port.busyUntil <= now && port.isEmpty()) {
            transmit(port, frameId, f);
            return;
        }
        if (!port.offer(frameId, f.priority, f.wireBytes)) {
            freeFrame(frameId);
            return;
        }
        if (!port.drainScheduled) {
            port.drainScheduled = true;
            queue.add(port.busyUntil, PORT_FREE, portIndex, 0);
        }
    }

    /** A host's NIC port has this index. */
    void enqueueAtNic(int host, int frameId) {
        enqueue(ports[host], host, frameId);
    }

    private void transmit(EgressPort port, int frameId, Frame f) {
        long done = now + port.serializationNanos(f.wireBytes);
        port.busyUntil = done;
        port.bytesSent += f.wireBytes;
        queue.add(done + port.latencyNanos, ARRIVE, port.nextNode, frameId);
    }

    private void portFree(int portIndex) {
        EgressPort port = ports[portIndex];
        port.drainScheduled = false;
        int frameId = port.poll();
        if (frameId < 0) {
            return;
        }
        Frame f = frames[frameId];
        port.queuedBytes -= f.wireBytes;
        transmit(port, frameId, f);
        if (!port.isEmpty()) {
            port.drainScheduled = true;
            queue.add(port.busyUntil, PORT_FREE, portIndex, 0);
        }
    }

    private void arrive(int node, int frameId) {
        Frame f = frames[frameId];
        if (node < hostCount) {
            packetsDelivered++;
            if (f.length > WireFormat.DATA_HEADER && (f.bytes[WireFormat.OFF_TYPE] & 0xFF) == PacketType.DATA.code) {
                dataPayloadDelivered += f.length - WireFormat.DATA_HEADER;
            }
            hosts[node].receive(frameId, f);
            return;
        }
        int dstRack = topo.rackOf(f.dst);
        if (node < hostCount + racks) {
            int rack = node - hostCount;
            if (rack == dstRack) {
                enqueue(ports[hostCount + f.dst], hostCount + f.dst, frameId);
                return;
            }
            int agg = topo.multipath == DatacenterTopology.Multipath.SPRAY
                    ? random.nextInt(aggs)
                    : Math.floorMod((f.src * 0x9E3779B1) ^ (f.dst * 0x85EBCA6B), aggs);
            int p = torUp(rack, agg);
            enqueue(ports[p], p, frameId);
            return;
        }
        int p = aggDown(node - hostCount - racks, dstRack);
        enqueue(ports[p], p, frameId);
    }
}
