package io.homa;

import io.homa.core.Counter;
import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketType;

import java.util.EnumMap;
import java.util.Map;

/**
 * An immutable snapshot of one socket's counters, summed over its engines: the protocol's
 * {@link Counter}s (packets sent and received by type, bytes, retransmissions, timeouts, RPCs
 * started, completed and failed), invalid datagrams dropped by {@link DropReason}, live RPCs, and
 * the I/O shell's own counts (datagrams and bytes by direction and kind, GSO sends, I/O errors,
 * call outcomes, injected faults).
 */
public final class HomaMetrics {
    /** The I/O shell's own counters. */
    public enum Shell {
        /** UDP datagrams handed to the kernel (a GSO send counts each segment). */
        DATAGRAMS_SENT,
        /** UDP datagrams read from the kernel. */
        DATAGRAMS_RECEIVED,
        /** Bytes of DATA datagrams sent (Homa header included, IP/UDP not). */
        BYTES_SENT_DATA,
        /** Bytes of control datagrams sent. */
        BYTES_SENT_CONTROL,
        /** Bytes of DATA datagrams received. */
        BYTES_RECEIVED_DATA,
        /** Bytes of control datagrams received (and anything not recognisable as DATA). */
        BYTES_RECEIVED_CONTROL,
        /** Sends of several segments in one system call (UDP GSO). */
        GSO_SENDS,
        /** I/O errors on the sockets (mostly sends the operating system refused). */
        IO_ERRORS,
        /** Calls handed to the protocol engine. */
        CALLS_STARTED,
        /** Calls that waited for a free slot ({@link HomaConfig#maxCallsPerServer()}) before starting. */
        CALLS_QUEUED,
        /** Calls that completed with a response. */
        CALLS_SUCCEEDED,
        /** Calls that failed (any reason, including the three below). */
        CALLS_FAILED,
        /** Calls failed because their deadline passed. */
        CALLS_DEADLINE_EXPIRED,
        /** Calls failed because the socket closed. */
        CALLS_CLOSED,
        /** Calls the caller cancelled (their RPC aborted in the engine). */
        CALLS_CANCELLED,
        /** Calls failed with {@link HomaOverloadedException}: the server refused them unrun. */
        CALLS_OVERLOADED,
        /** Requests delivered to the handler. */
        REQUESTS_HANDLED,
        /** Requests answered by the handler. */
        REQUESTS_REPLIED,
        /** Requests dropped: the handler threw, never replied in time, or none was set. */
        REQUESTS_DROPPED,
        /**
         * Requests refused unrun because {@link HomaConfig#maxQueuedRequests()} requests already
         * waited for their handler (the caller gets {@link HomaOverloadedException}).
         */
        REQUESTS_OVERLOADED,
        /** Requests whose handler never ran: their request timeout passed (or the socket closed) while they waited. */
        REQUESTS_SKIPPED,
        /**
         * Datagrams the shell itself dropped: overload notices naming none of our live calls or
         * not from its server, and datagrams whose processing failed (see the log).
         */
        DATAGRAMS_DROPPED,
        /** Fault injection: datagrams dropped on purpose. */
        FAULTS_DROPPED,
        /** Fault injection: datagrams sent twice on purpose. */
        FAULTS_DUPLICATED,
        /** Fault injection: datagrams delayed so that later ones overtake them. */
        FAULTS_REORDERED
    }

    private final long[] counters;
    private final long[] drops;
    private final long[] shell;
    private final int activeClientRpcs;
    private final int activeServerRpcs;

    HomaMetrics(long[] counters, long[] drops, long[] shell, int activeClientRpcs, int activeServerRpcs) {
        this.counters = counters;
        this.drops = drops;
        this.shell = shell;
        this.activeClientRpcs = activeClientRpcs;
        this.activeServerRpcs = activeServerRpcs;
    }

    /** A protocol counter. */
    public long counter(Counter c) {
        return counters[c.ordinal()];
    }

    /** An I/O shell counter. */
    public long shell(Shell c) {
        return shell[c.ordinal()];
    }

    /** Invalid datagrams dropped for {@code reason}. */
    public long drops(DropReason reason) {
        return drops[reason.ordinal()];
    }

    /** Every drop reason with a non-zero count. */
    public Map<DropReason, Long> dropsByReason() {
        Map<DropReason, Long> m = new EnumMap<>(DropReason.class);
        for (DropReason r : DropReason.values()) {
            if (drops[r.ordinal()] != 0) {
                m.put(r, drops[r.ordinal()]);
            }
        }
        return m;
    }

    /** Packets of {@code type} sent. */
    public long packetsSent(PacketType type) {
        return counter(Counter.valueOf("PACKETS_SENT_" + type.name()));
    }

    /** Packets of {@code type} received and accepted by the decoder. */
    public long packetsReceived(PacketType type) {
        return counter(Counter.valueOf("PACKETS_RECEIVED_" + type.name()));
    }

    /** DATA segments sent again because the receiver asked (RESEND). */
    public long retransmissions() {
        return counter(Counter.PACKETS_RETRANSMITTED);
    }

    /** Client RPCs failed because the server was silent too long (deadline expiries not included). */
    public long timeouts() {
        return counter(Counter.TIMEOUTS);
    }

    /** Live RPCs now, client plus server. */
    public int activeRpcs() {
        return activeClientRpcs + activeServerRpcs;
    }

    /** Live client RPCs now. */
    public int activeClientRpcs() {
        return activeClientRpcs;
    }

    /** Live server RPCs now. */
    public int activeServerRpcs() {
        return activeServerRpcs;
    }

    /** Client RPCs that completed with a response plus server RPCs acknowledged by their client. */
    public long completedRpcs() {
        return counter(Counter.CLIENT_RPCS_COMPLETED) + counter(Counter.SERVER_RPCS_COMPLETED);
    }

    /** Invalid datagrams dropped, all reasons. */
    public long droppedPackets() {
        return counter(Counter.PACKETS_DROPPED);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("HomaMetrics{active=").append(activeClientRpcs).append("c/")
                .append(activeServerRpcs).append('s');
        for (Counter c : Counter.values()) {
            if (counters[c.ordinal()] != 0) {
                sb.append(' ').append(c.name().toLowerCase()).append('=').append(counters[c.ordinal()]);
            }
        }
        for (Shell c : Shell.values()) {
            if (shell[c.ordinal()] != 0) {
                sb.append(' ').append(c.name().toLowerCase()).append('=').append(shell[c.ordinal()]);
            }
        }
        Map<DropReason, Long> d = dropsByReason();
        if (!d.isEmpty()) {
            sb.append(" drops=").append(d);
        }
        return sb.append('}').toString();
    }
}
