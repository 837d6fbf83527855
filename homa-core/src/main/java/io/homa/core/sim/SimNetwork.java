package io.homa.core.sim;

import io.homa.core.EngineConfig;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

/**
 * A deterministic simulated datacenter: hosts running Homa engines, each with an uplink (its NIC:
 * a FIFO at the link rate) into one switch, and a downlink from the switch (an egress port with 8
 * strict priority queues at the link rate); per-link propagation latency; seeded loss, duplication
 * and reordering, separately for data and control packets. Time is virtual and everything is
 * ordered by (time, sequence), so the same seed gives the same run.
 */
public final class SimNetwork {
    /** Settings of the network (not of the engines). */
    public static final class Settings {
        /** Link rate of every uplink and downlink, bit/s. */
        public long linkBitsPerSecond = 10_000_000_000L;
        /** One-way propagation latency of each link (host to switch, switch to host), ns. */
        public long linkLatencyNanos = 1_000;
        /** Buffer of each switch egress port, bytes. */
        public long portBufferBytes = 16L << 20;
        /** Strict priority queues at the switch ports (false: one FIFO). */
        public boolean priorityQueues = true;
        /** IP + UDP header bytes added to every datagram on the wire. */
        public int ipUdpOverhead = 28;
        public FaultModel dataFaults = FaultModel.NONE;
        public FaultModel controlFaults = FaultModel.NONE;
    }

    private final Settings settings;
    private final long seed;
    private final Random random;
    private final PriorityQueue<Event> queue = new PriorityQueue<>();
    private final Map<InetSocketAddress, SimHost> hosts = new HashMap<>();
    private final List<SimHost> hostList = new ArrayList<>();
    private Predicate<SimPacket> interceptor = p -> true;
    private long now;
    private long seq;
    private long eventsRun;
    long packetsDropped;
    long packetsDuplicated;
    long packetsReordered;
    long packetsDelivered;

    public SimNetwork(long seed) {
        this(seed, new Settings());
    }

    public SimNetwork(long seed, Settings settings) {
        this.seed = seed;
        this.settings = settings;
        this.random = new Random(seed);
    }

    public Settings settings() {
        return settings;
    }

    /** The seed this network was made with: print it when a test fails. */
    public long seed() {
        return seed;
    }

    /** Current virtual time, ns. */
    public long now() {
        return now;
    }

    /** Adds a host with its own engine (its RPC ids seeded from this network's seed). */
    public SimHost addHost(EngineConfig config) {
        int index = hostList.size() + 1;
        InetSocketAddress address;
        try {
            address = new InetSocketAddress(
                    InetAddress.getByAddress(new byte[]{10, 0, (byte) (index >> 8), (byte) index}), 4000);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
        SimHost host = new SimHost(this, address, config, seed * 31 + index,
                new PriorityPort(settings.priorityQueues, settings.portBufferBytes));
        hosts.put(address, host);
        hostList.add(host);
        return host;
    }

    public List<SimHost> hosts() {
        return hostList;
    }

    long serializationNanos(int wireBytes) {
        return wireBytes * 8L * 1_000_000_000L / settings.linkBitsPerSecond;
    }

    // ---------------------------------------------------------------- event loop

    /** Runs {@code action} at virtual time {@code at} (not before now) on the simulation's thread. */
    public void schedule(long at, Runnable action) {
        queue.add(new Event(Math.max(at, now), seq++, action));
    }

    /** Runs one event; false when none is left. */
    public boolean step() {
        Event e = queue.poll();
        if (e == null) {
            return false;
        }
        now = e.time;
        eventsRun++;
        e.action.run();
        return true;
    }

    /**
     * Runs until nothing is scheduled (every engine idle, nothing in flight) or until virtual time
     * passes {@code limitNanos} from now.
     *
     * @return true if the network went idle
     */
    public boolean runUntilIdle(long limitNanos) {
        long end = now + limitNanos;
        while (!queue.isEmpty()) {
            if (queue.peek().time > end) {
                now = end;
                return false;
            }
            step();
        }
        return true;
    }

    /** Runs until {@code done} holds or virtual time passes {@code limitNanos} from now. */
    public boolean runUntil(BooleanSupplier done, long limitNanos) {
        long end = now + limitNanos;
        while (!done.getAsBoolean()) {
            if (queue.isEmpty() || queue.peek().time > end) {
                return done.getAsBoolean();
            }
            step();
        }
        return true;
    }

    /** Runs every event up to virtual time {@code now + nanos}. */
    public void runFor(long nanos) {
        long end = now + nanos;
        while (!queue.isEmpty() && queue.peek().time <= end) {
            step();
        }
        now = Math.max(now, end);
    }

    public long eventsRun() {
        return eventsRun;
    }

    public long packetsDropped() { return packetsDropped; }

    public long packetsDuplicated() { return packetsDuplicated; }

    public long packetsReordered() { return packetsReordered; }

    public long packetsDelivered() { return packetsDelivered; }

    // ---------------------------------------------------------------- the switch

    /**
     * Puts a raw datagram on the wire from any source address (a host or a hostile outsider) to a
     * host; it goes through the destination's downlink like any other packet.
     */
    public void inject(InetSocketAddress source, InetSocketAddress destination, byte[] bytes, int priority) {
        arriveAtSwitch(new SimPacket(source, destination, bytes, priority, settings.ipUdpOverhead));
    }

    /**
     * Sees every packet as it enters the switch (before faults); returning false drops it. Tests use
     * it to watch the wire and to lose chosen packets.
     */
    public void intercept(Predicate<SimPacket> keep) {
        this.interceptor = keep;
    }

    /** A packet reaches the switch from an uplink: faults, then the destination's egress port. */
    void arriveAtSwitch(SimPacket p) {
        if (!interceptor.test(p)) {
            packetsDropped++;
            return;
        }
        FaultModel faults = p.isData() ? settings.dataFaults : settings.controlFaults;
        if (!faults.isNone()) {
            if (random.nextDouble() < faults.dropRate()) {
                packetsDropped++;
                return;
            }
            if (random.nextDouble() < faults.duplicateRate()) {
                packetsDuplicated++;
                enterPort(p);
            }
            if (faults.reorderDelayMaxNanos() > 0 && random.nextDouble() < faults.reorderRate()) {
                packetsReordered++;
                long delay = 1 + (long) (random.nextDouble() * faults.reorderDelayMaxNanos());
                schedule(now + delay, () -> enterPort(p));
                return;
            }
        }
        enterPort(p);
    }

    private void enterPort(SimPacket p) {
        SimHost dst = hosts.get(p.destination);
        if (dst == null || !dst.connected) {
            packetsDropped++;
            return;
        }
        PriorityPort port = dst.downlink;
        if (!port.offer(p)) {
            packetsDropped++;
            return;
        }
        if (!port.busy) {
            drainPort(dst);
        }
    }

    private void drainPort(SimHost dst) {
        PriorityPort port = dst.downlink;
        SimPacket p = port.poll();
        if (p == null) {
            port.busy = false;
            return;
        }
        port.busy = true;
        long done = now + serializationNanos(p.wireBytes);
        schedule(done, () -> {
            schedule(now + settings.linkLatencyNanos, () -> {
                packetsDelivered++;
                dst.receive(p);
            });
            drainPort(dst);
        });
    }

    private record Event(long time, long seq, Runnable action) implements Comparable<Event> {
        @Override
        public int compareTo(Event o) {
            int c = Long.compare(time, o.time);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }
}
