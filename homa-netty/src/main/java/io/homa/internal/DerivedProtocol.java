package io.homa.internal;

import io.homa.core.EngineConfig;
import io.homa.core.wire.WireFormat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;

/**
 * The protocol settings a configuration derives from where the socket runs, for the settings its
 * user did not choose: the MTU from the bind interface (and a larger grant budget with it above
 * jumbo frames, and one that covers a user-space host's grant turnaround below them), the IPv6
 * header size, unscheduled bytes that cover a user-space round trip to the first grant on a link
 * of the default rate or faster, and on a slower link the unscheduled bytes, the grant budget and
 * the NIC queue scaled to it; and the pacer only where the link's rate or queue was given.
 * {@code HomaConfig.build()} calls it.
 * Internal use only.
 */
public final class DerivedProtocol {
    /**
     * Link time the grant budget covers at least on a link slower than the default (unless that
     * is more than the default budget): a grant's way to the sender and its data's way back
     * through two user-space hosts whose wake-ups come hundreds of microseconds late, with room
     * for batched grants (at 100 Mbit/s, 62.5 KB: one message's window holds four batches). The
     * budget scaled in proportion to the link (ten segments, 14 KB, at 100 Mbit/s) idled the
     * testbed's links waiting for grants and left every DATA packet its own GRANT; measured in
     * docs/benchmarks.md, "The grant budget on slow links". Scheduled bytes queue at the lowest
     * priorities, so the larger budget does not delay short messages at the switch.
     */
    private static final long SLOW_LINK_GRANT_TURNAROUND_NANOS = 5_000_000;

    /**
     * Link time the grant budget covers at an MTU of 9,000 or less (at least the default budget,
     * at most the large-MTU one): 1,562,500 bytes at 25 Gbit/s. Linux Homa's 400,000 bytes are
     * 128 us of such a link, sized for a kernel's turnaround; a grant through two user-space
     * hosts takes hundreds of microseconds, and the sender sends its shortest message first, so
     * one message's window ({@code maxIncoming / (N + 1)}) must cover that alone. With 400,000
     * bytes a veth pair at MTU 1,500 waited for grants (1 MB echoes: 0.84-0.90x blocking kernel
     * TCP); with 1,562,500, 0.94-0.97x (docs/benchmarks.md, "The grant budget at a real MTU").
     */
    private static final long GRANT_TURNAROUND_NANOS = 500_000;

    /**
     * Link time a message's unscheduled bytes cover on a link of the default rate or faster
     * (250,000 bytes at 25 Gbit/s), at most a quarter of the grant budget: the round trip to a
     * message's first grant through two user-space hosts. Linux Homa's 40,000 bytes are 13 us of
     * such a link, a kernel's round trip; here a lone 1 MB message then waited for its first grant
     * (on a veth pair at MTU 1,500: 1.24x blocking TCP's p50 with 40,000 against 1.05x with
     * 250,000, medians of ten runs each); an incast of eight 1 MB requests showed no consistent
     * difference (docs/benchmarks.md, "Eight senders at once"). Receivers announce what they
     * accept, so a peer set lower is sent no more than that.
     */
    private static final long UNSCHEDULED_TURNAROUND_NANOS = 80_000;

    /** NIC queue the pacer allows on a link slower than the default: covers a late timer wake-up. */
    private static final long SLOW_LINK_NIC_QUEUE_NANOS = 500_000;

    private final boolean mtuChosen;
    private final boolean budgetChosen;
    private final boolean unscheduledChosen;
    private final boolean nicQueueChosen;
    private final boolean linkChosen;
    private final boolean pacerChosen;

    /** Which settings the user chose (those are never derived). */
    public DerivedProtocol(boolean mtuChosen, boolean budgetChosen, boolean unscheduledChosen, boolean nicQueueChosen,
                           boolean linkChosen, boolean pacerChosen) {
        this.mtuChosen = mtuChosen;
        this.budgetChosen = budgetChosen;
        this.unscheduledChosen = unscheduledChosen;
        this.nicQueueChosen = nicQueueChosen;
        this.linkChosen = linkChosen;
        this.pacerChosen = pacerChosen;
    }

    /**
     * Builds the engine's configuration for a socket bound to {@code bind}.
     *
     * @param largeMtuBudget the grant budget above an MTU of 9,000 unless one was chosen, and the
     *                       most a turnaround's budget grows to at a smaller MTU
     * @throws IllegalArgumentException naming a bad protocol setting
     */
    public EngineConfig build(EngineConfig.Builder protocol, InetSocketAddress bind, int largeMtuBudget) {
        if (!mtuChosen) {
            protocol.mtu(interfaceMtu(bind));
        }
        if (!pacerChosen) {
            // The pacer models a link of linkMbps; told nothing of the link, it would pace to a
            // guess, and where there is no NIC queue (loopback, veth) every hold only cuts a GSO
            // send short and waits for a late timer (docs/benchmarks.md, "The pacer at a guessed rate").
            protocol.pacerEnabled(linkChosen || nicQueueChosen);
        }
        if (!budgetChosen) {
            // Above 9,000 bytes several 64 KB segments must fit a window; at or below, the budget
            // covers a grant's turnaround (a slower link's own rule follows in scaledToLink).
            EngineConfig asSet = protocol.build();
            long budget = asSet.mtu > 9_000 ? largeMtuBudget
                    : Math.max(EngineConfig.defaults().maxIncoming, Math.min(linkBytes(asSet.linkMbps, GRANT_TURNAROUND_NANOS), largeMtuBudget));
            protocol.maxIncoming((int) budget);
        }
        EngineConfig engine = protocol.build();
        if (bind.getAddress() instanceof Inet6Address && engine.ipUdpOverhead == WireFormat.IPV4_UDP_OVERHEAD) {
            engine = engine.toBuilder().ipUdpOverhead(WireFormat.IPV6_UDP_OVERHEAD).build();
        }
        if (!unscheduledChosen && engine.linkMbps >= EngineConfig.defaults().linkMbps) {
            long turnaround = Math.min(linkBytes(engine.linkMbps, UNSCHEDULED_TURNAROUND_NANOS), engine.maxIncoming / 4L);
            // Never below the engine's default (a small budget's quarter can be).
            int floor = EngineConfig.defaults().unscheduledBytes;
            engine = engine.toBuilder().unscheduledBytes((int) Math.max(floor, turnaround)).build();
        }
        if (linkChosen && engine.linkMbps < EngineConfig.defaults().linkMbps) {
            engine = scaledToLink(engine); // after the IPv6 header: segments are sized by it
        }
        return engine;
    }

    /** Bytes a link of {@code linkMbps} carries in {@code nanos} (saturating). */
    private static long linkBytes(long linkMbps, long nanos) {
        return linkMbps > Long.MAX_VALUE / nanos ? Long.MAX_VALUE
                : linkMbps * nanos / 8_000; // Mbit/s x ns / 8,000 = bytes
    }

    /**
     * The MTU to use for a socket bound to {@code bind}: its interface's MTU (at most 65,535, the
     * largest IPv4 datagram), or 1,500 for the wildcard address or when it cannot be read.
     */
    public static int interfaceMtu(InetSocketAddress bind) {
        try {
            InetAddress a = bind.getAddress();
            if (a == null || a.isAnyLocalAddress()) {
                return 1_500;
            }
            NetworkInterface ni = NetworkInterface.getByInetAddress(a);
            int mtu = ni == null ? -1 : ni.getMTU();
            return mtu < 576 ? 1_500 : Math.min(mtu, 65_535);
        } catch (IOException | RuntimeException e) {
            return 1_500;
        }
    }

    /** Unscheduled bytes and grant budget not chosen by the user, scaled down to a slower link. */
    private EngineConfig scaledToLink(EngineConfig engine) {
        EngineConfig d = EngineConfig.defaults();
        double f = (double) engine.linkMbps / d.linkMbps;
        int segment = engine.segmentPayload();
        EngineConfig.Builder b = engine.toBuilder();
        if (!unscheduledChosen) {
            b.unscheduledBytes((int) Math.max(segment, Math.round(d.unscheduledBytes * f)));
        }
        if (!budgetChosen) {
            long holdsTurnaround = linkBytes(engine.linkMbps, SLOW_LINK_GRANT_TURNAROUND_NANOS);
            // (5 ms is always more than the default budget scaled in proportion to the link.)
            long budget = Math.max(Math.max(10L * segment, engine.mtu), holdsTurnaround);
            // At most the default budget, or a grant's turnaround on this link if that is more
            // (625,000 bytes at 10 Gbit/s): no step down where the link falls below the default's.
            long cap = Math.max(Math.max(d.maxIncoming, 10L * segment), linkBytes(engine.linkMbps, GRANT_TURNAROUND_NANOS));
            b.maxIncoming((int) Math.min(budget, cap));
        }
        // The pacer lets the NIC queue hold what the link sends in SLOW_LINK_NIC_QUEUE_NANOS:
        // it is woken by a timer, and a wake-up that comes late with the queue empty leaves the
        // link idle (measurements: docs/benchmarks.md, "Notes moved from the code"). A time, not
        // a packet count: on a 10 Mbit/s link four packets would be 5 ms of queue in front of
        // every short message.
        if (!nicQueueChosen) {
            b.maxNicQueueNanos(Math.max(engine.maxNicQueueNanos, SLOW_LINK_NIC_QUEUE_NANOS));
        }
        return b.build();
    }
}
