package io.homa.core.sim;

import io.homa.core.wire.WireFormat;

/**
 * The simulated datacenter's shape and timing: hosts in racks under top-of-rack (ToR) switches,
 * every ToR linked to every aggregation switch; strict priority queues at every output port; per
 * link a fixed latency. {@link #paper()} is the SIGCOMM 2018 paper's simulated network (section 5.2,
 * and the configuration of its OMNeT++ simulator, PlatformLab/HomaSimulation): 144 hosts in 9 racks
 * of 16, 10 Gbit/s host links, 40 Gbit/s ToR-aggregation links (4 aggregation switches: full
 * bisection bandwidth), 8 priority levels, 0.25 us per switch, 0.5 us NIC delay and 0.5 us host
 * software delay each way, store-and-forward, unlimited buffers, packets sprayed over the
 * aggregation switches at random.
 */
public final class DatacenterTopology {
    /** How a ToR picks the aggregation switch for a packet leaving the rack. */
    public enum Multipath {
        /** Each packet independently at random (the paper's choice). */
        SPRAY,
        /** By a hash of (source, destination) host, as ECMP does for a flow. */
        FLOW_HASH
    }

    public final int hosts;
    public final int racks;
    public final long hostLinkBitsPerSecond;
    public final long fabricLinkBitsPerSecond;
    /** Host bandwidth of a rack over its uplink bandwidth (1: full bisection). */
    public final double oversubscription;
    public final int priorityLevels;
    /** Buffer of each output port, bytes ({@link Long#MAX_VALUE}: unlimited, as in the paper). */
    public final long portBufferBytes;
    public final Multipath multipath;
    /** Fixed delay of each switch hop (on the link out of the switch), ns. */
    public final long switchDelayNanos;
    /** NIC delay on the host's uplink, ns. */
    public final long nicDelayNanos;
    /** Host software delay, once when sending and once when receiving, ns. */
    public final long hostSoftwareNanos;
    /** Largest IP datagram. */
    public final int mtu;

    private DatacenterTopology(Builder b) {
        this.hosts = b.hosts;
        this.racks = b.racks;
        this.hostLinkBitsPerSecond = b.hostLinkBitsPerSecond;
        this.fabricLinkBitsPerSecond = b.fabricLinkBitsPerSecond;
        this.oversubscription = b.oversubscription;
        this.priorityLevels = b.priorityLevels;
        this.portBufferBytes = b.portBufferBytes;
        this.multipath = b.multipath;
        this.switchDelayNanos = b.switchDelayNanos;
        this.nicDelayNanos = b.nicDelayNanos;
        this.hostSoftwareNanos = b.hostSoftwareNanos;
        this.mtu = b.mtu;
    }

    /** The SIGCOMM 2018 paper's topology (see the class comment). */
    public static DatacenterTopology paper() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        return new Builder().hosts(hosts).racks(racks).hostLinkBitsPerSecond(hostLinkBitsPerSecond)
                .fabricLinkBitsPerSecond(fabricLinkBitsPerSecond).oversubscription(oversubscription)
                .priorityLevels(priorityLevels).portBufferBytes(portBufferBytes).multipath(multipath)
                .switchDelayNanos(switchDelayNanos).nicDelayNanos(nicDelayNanos)
                .hostSoftwareNanos(hostSoftwareNanos).mtu(mtu);
    }

    public int hostsPerRack() {
        return hosts / racks;
    }

    public int rackOf(int host) {
        return host / hostsPerRack();
    }

    /**
     * Aggregation switches: enough uplink bandwidth for a rack's hosts divided by the
     * oversubscription (as the paper's simulator computes it), at least one; none for one rack.
     */
    public int aggregationSwitches() {
        if (racks == 1) {
            return 0;
        }
        double n = hostsPerRack() * (double) hostLinkBitsPerSecond / (oversubscription * fabricLinkBitsPerSecond);
        return Math.max(1, (int) Math.round(n));
    }

    /** Bytes a datagram of {@code datagramLength} (Homa header and payload) occupies on a link. */
    public int wireBytes(int datagramLength) {
        int ip = Math.max(datagramLength + WireFormat.IPV4_UDP_OVERHEAD, 46); // Ethernet's minimum payload
        return ip + WireFormat.ETHERNET_FRAME_OVERHEAD;
    }

    /** Bytes a message of {@code length} occupies on the wire, every header and framing included. */
    public long messageWireBytes(int length, int segmentPayload) {
        int frames = Math.max(1, (length + segmentPayload - 1) / segmentPayload);
        int last = length - (frames - 1) * segmentPayload;
        return (long) (frames - 1) * wireBytes(segmentPayload + WireFormat.DATA_HEADER)
                + wireBytes(last + WireFormat.DATA_HEADER);
    }

    /** Latency of a host's uplink into its ToR: software delay on sending plus the NIC's. */
    long uplinkLatencyNanos() {
        return hostSoftwareNanos + nicDelayNanos;
    }

    /** Latency of a ToR's link down to a host: the switch's delay plus software delay on receiving. */
    long downlinkLatencyNanos() {
        return switchDelayNanos + hostSoftwareNanos;
    }

    /**
     * The best possible one-way time of a message of {@code length} payload bytes from host
     * {@code src} to host {@code dst} on an idle network: every frame serialized back to back at
     * the sender's NIC, then through each switch store-and-forward at each link's rate, plus every
     * link's fixed latency. It is exact for this simulator (same rounding), assuming the sender is
     * never stopped by a missing grant (its unscheduled bytes cover a round trip). With sprayed
     * packets the last, shorter frame may take another path and overtake the one before it; the
     * ideal then takes the better of the two orders, so that it stays a lower bound.
     */
    public long idealNanos(int src, int dst, int length, int segmentPayload) {
        boolean sameRack = rackOf(src) == rackOf(dst);
        long h = hostLinkBitsPerSecond;
        long f = fabricLinkBitsPerSecond;
        long[] rates = sameRack ? new long[]{h, h} : new long[]{h, f, f, h};
        long latency = uplinkLatencyNanos() + downlinkLatencyNanos() + (sameRack ? 0 : 2 * switchDelayNanos);
        int frames = Math.max(1, (length + segmentPayload - 1) / segmentPayload);
        int fullWire = wireBytes(segmentPayload + WireFormat.DATA_HEADER);
        int lastWire = wireBytes(length - (frames - 1) * segmentPayload + WireFormat.DATA_HEADER);
        // Only the last two frames matter: earlier full frames never wait after the first link
        // (it is the slowest), and the last frame can wait behind the one before it. Latencies
        // delay both alike, so they are added at the end.
        long prevArrive = frames > 1 ? (frames - 2) * ser(fullWire, h) : 0;
        long lastArrive = (frames - 1) * ser(fullWire, h);
        for (long rate : rates) {
            long prevEnd = frames > 1 ? prevArrive + ser(fullWire, rate) : Long.MIN_VALUE;
            lastArrive = Math.max(lastArrive, prevEnd) + ser(lastWire, rate);
            prevArrive = prevEnd;
        }
        if (frames == 2 && !sameRack && multipath == Multipath.SPRAY && aggregationSwitches() > 1) {
            // Separate paths: each frame reaches the destination's port without waiting.
            long a1 = ser(fullWire, h) + 2 * ser(fullWire, f);
            long a2 = ser(fullWire, h) + ser(lastWire, h) + 2 * ser(lastWire, f);
            long inOrder = Math.max(a1 + ser(fullWire, h), a2) + ser(lastWire, h);
            long overtaken = a2 < a1 ? Math.max(a2 + ser(lastWire, h), a1) + ser(fullWire, h) : Long.MAX_VALUE;
            lastArrive = Math.min(lastArrive, Math.min(inOrder, overtaken));
        }
        return lastArrive + latency;
    }

    private static long ser(int wireBytes, long rate) {
        return (wireBytes * 8_000_000_000L + rate - 1) / rate;
    }

    @Override
    public String toString() {
        return hosts + " hosts in " + racks + " racks, " + aggregationSwitches() + " aggregation switches, host links "
                + hostLinkBitsPerSecond / 1e9 + " Gbit/s, fabric links " + fabricLinkBitsPerSecond / 1e9 + " Gbit/s, "
                + priorityLevels + " priority levels, " + (portBufferBytes == Long.MAX_VALUE ? "unlimited" : portBufferBytes + " B")
                + " port buffers, " + multipath.name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ')
                + ", switch " + switchDelayNanos + " ns, NIC " + nicDelayNanos + " ns, host software " + hostSoftwareNanos + " ns each way";
    }

    /** Builder of {@link DatacenterTopology}; defaults are the paper's. */
    public static final class Builder {
        private int hosts = 144;
        private int racks = 9;
        private long hostLinkBitsPerSecond = 10_000_000_000L;
        private long fabricLinkBitsPerSecond = 40_000_000_000L;
        private double oversubscription = 1.0;
        private int priorityLevels = 8;
        private long portBufferBytes = Long.MAX_VALUE;
        private Multipath multipath = Multipath.SPRAY;
        private long switchDelayNanos = 250;
        private long nicDelayNanos = 500;
        private long hostSoftwareNanos = 500;
        private int mtu = 1500;

        private Builder() {
        }

        public Builder hosts(int v) { hosts = v; return this; }
        public Builder racks(int v) { racks = v; return this; }
        public Builder hostLinkBitsPerSecond(long v) { hostLinkBitsPerSecond = v; return this; }
        public Builder fabricLinkBitsPerSecond(long v) { fabricLinkBitsPerSecond = v; return this; }
        public Builder oversubscription(double v) { oversubscription = v; return this; }
        public Builder priorityLevels(int v) { priorityLevels = v; return this; }
        public Builder portBufferBytes(long v) { portBufferBytes = v; return this; }
        public Builder multipath(Multipath v) { multipath = v; return this; }
        public Builder switchDelayNanos(long v) { switchDelayNanos = v; return this; }
        public Builder nicDelayNanos(long v) { nicDelayNanos = v; return this; }
        public Builder hostSoftwareNanos(long v) { hostSoftwareNanos = v; return this; }
        public Builder mtu(int v) { mtu = v; return this; }

        public DatacenterTopology build() {
            check(hosts >= 2, "hosts must be >= 2, was " + hosts);
            check(racks >= 1 && hosts % racks == 0, "racks must divide hosts: " + hosts + " hosts, " + racks + " racks");
            check(hostLinkBitsPerSecond >= 1_000_000 && fabricLinkBitsPerSecond >= 1_000_000,
                    "link rates must be >= 1 Mbit/s");
            check(oversubscription >= 1.0, "oversubscription must be >= 1, was " + oversubscription);
            check(priorityLevels >= 1 && priorityLevels <= 8, "priorityLevels must be 1..8, was " + priorityLevels);
            check(portBufferBytes >= mtu + WireFormat.ETHERNET_FRAME_OVERHEAD, "portBufferBytes must hold one packet");
            check(multipath != null, "multipath must be set");
            check(switchDelayNanos >= 0 && nicDelayNanos >= 0 && hostSoftwareNanos >= 0, "delays must be >= 0");
            check(mtu >= 576 && mtu <= 65_535, "mtu must be 576..65535, was " + mtu);
            return new DatacenterTopology(this);
        }

        private static void check(boolean ok, String message) {
            if (!ok) {
                throw new IllegalArgumentException(message);
            }
        }
    }
}
