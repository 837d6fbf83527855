package io.homa;

import io.homa.core.Counter;
import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketType;
import io.homa.internal.observe.MetricsSnapshot;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An immutable snapshot of one socket's counters, summed over its engines: the protocol's counters
 * (packets sent and received by type, bytes, retransmissions, timeouts, RPCs started, completed
 * and failed), invalid datagrams dropped by reason, live RPCs, and the I/O shell's own counts
 * ({@link Shell}: datagrams and bytes by direction and kind, GSO sends, I/O errors, call outcomes,
 * injected faults).
 *
 * <p>The protocol's counters and drop reasons are named by strings (e.g. {@code "TIMEOUTS"},
 * {@code "BAD_MAGIC"}; {@link #counters()} and {@link #dropsByReason()} list them, docs/netty.md
 * explains them): they belong to the engine, whose types are not part of this API. Any thread may
 * read a snapshot.
 */
public final class HomaMetrics {
    /** The I/O shell's own counters. */
    public enum Shell {
        /** UDP datagrams handed to the kernel (a GSO send counts each segment). */
        DATAGRAMS_SENT,
        /**
         * System calls that handed datagrams to the kernel: each {@code sendmmsg} (one per socket
         * and loop turn, however many datagrams the turn wrote), each {@code sendto} of a caller's
         * own turn, and with transports that cannot batch (NIO, io_uring) each datagram's send.
         * {@code DATAGRAMS_SENT / SEND_CALLS} is how many datagrams share a call. Sends the kernel
         * refused for a full socket buffer and Netty retried later are not counted again.
         */
        SEND_CALLS,
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
        /**
         * Sends of several segments as one datagram the kernel splits (UDP GSO): a message's
         * segments, or equal-size datagrams of several messages to one peer written in one turn.
         */
        GSO_SENDS,
        /**
         * Received DATA datagrams of long messages handed to the engine after the control packets
         * and short messages read in the same I/O round (SRPT on the host; see docs/netty.md).
         */
        RECEIVE_DEFERRED,
        /** I/O errors on the sockets (mostly sends the operating system refused). */
        IO_ERRORS,
        /**
         * Thread hand-offs into an event loop: commands queued from another thread (a call, a
         * reply from a handler thread, a cancellation, a datagram another loop read) that had to
         * wake the loop. Commands queued while a wake-up is pending ride along and do not count.
         * Docs/netty.md counts them per call for each executor setting.
         */
        LOOP_HANDOFFS,
        /**
         * Thread hand-offs to the handler executor: handlers to run and call futures to complete.
         * Zero with {@link HomaConfig#inlineExecution()}.
         */
        EXECUTOR_HANDOFFS,
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
        /**
         * Requests taken out of the handler queue without running their handler: their deadline
         * had passed, or they were dropped or cancelled, or the socket closed, while they waited.
         * (Those the queue refuses count as {@link #REQUESTS_SHED} instead.)
         */
        REQUESTS_SKIPPED,
        /**
         * Datagrams the shell itself dropped: datagrams whose processing failed (see the log).
         * (Packets the engine refuses count as {@link #droppedPackets()}, by reason.)
         */
        DATAGRAMS_DROPPED,
        /**
         * TCP fallback ({@link HomaConfig#tcpFallback()}): calls sent over TCP, fallbacks and
         * direct ones. They count in the CALLS_ counters above as well (except CALLS_STARTED, which
         * counts Homa RPCs), so the Homa share is the difference.
         */
        TCP_CALLS,
        /** TCP fallback: Homa calls retried over TCP because their server sent no Homa packet within the probe interval. */
        FALLBACKS,
        /** TCP fallback: retries the server refused because it had received the request over Homa (the call went on over Homa). */
        FALLBACKS_REFUSED,
        /** TCP fallback: calls sent over Homa to a peer whose time on TCP was over, to see whether Homa works again. */
        PROBES,
        /** TCP fallback, a gauge: peers this socket calls over TCP now. */
        PEERS_ON_TCP,
        /** TCP fallback: TCP connections opened to peers. */
        TCP_CONNECTIONS_OPENED,
        /**
         * TCP fallback, serving side: requests received over TCP and handed to the handler (they
         * count in REQUESTS_HANDLED, REQUESTS_REPLIED, REQUESTS_DROPPED and REQUESTS_OVERLOADED as well).
         */
        TCP_REQUESTS,
        /** TCP fallback, serving side: TCP connections closed for bad input (a malformed or too long frame). */
        TCP_BAD_FRAMES,
        /** Fault injection: datagrams dropped on purpose. */
        FAULTS_DROPPED,
        /** Fault injection: datagrams sent twice on purpose. */
        FAULTS_DUPLICATED,
        /** Fault injection: datagrams delayed so that later ones overtake them. */
        FAULTS_REORDERED,
        /**
         * Payload bytes of DATA datagrams copied into send buffers (a {@code byte[]} or heap
         * payload, or any payload with {@link HomaConfig#zeroCopySend()} off). Retransmissions count again.
         */
        SEND_PAYLOAD_BYTES_COPIED,
        /**
         * Payload bytes of DATA datagrams sent as slices of the caller's {@code ByteBuf}, not copied
         * ({@link HomaConfig#zeroCopySend()}). Retransmissions count again.
         */
        SEND_PAYLOAD_BYTES_IN_PLACE,
        /**
         * Requests refused unrun because their deadline passed while they waited for a handler:
         * the caller's (sent with the request, which the server takes to end a little early) or
         * else {@link HomaConfig#requestTimeout()}. A caller still waiting gets
         * {@link HomaOverloadedException}; the id is remembered, so a copy sent again does not run.
         * They count in REQUESTS_SKIPPED too, once a thread takes them out of the queue.
         */
        REQUESTS_EXPIRED,
        /**
         * Requests refused unrun by the handler queue's delay management: under overload because
         * they waited longer than the queue's target ({@link HomaConfig#queueTarget()}) and the
         * work in front of them would take most of their time left, or (overload or not) because
         * that work would outlast their deadline. Their callers get {@link HomaOverloadedException}
         * at once.
         */
        REQUESTS_SHED,
        /** Requests whose client gave the call up (a CANCEL packet) before they were answered. */
        REQUESTS_CANCELLED,
        /**
         * Commands (a call, a reply from a handler thread, a cancellation) whose own thread ran
         * the protocol's turn itself, the event loop being idle, instead of handing it to the loop
         * ({@link HomaConfig#callerSends()}): each is a hand-off saved.
         */
        CALLER_TURNS,
        /** Datagrams those threads sent themselves, by a system call on the socket (not through the loop). */
        CALLER_DATAGRAMS,
        /**
         * Looks at the socket by a thread waiting for its response ({@link HomaConfig#callerSpin()},
         * {@link HomaConfig#callerReads()}) that found datagrams and handled them itself: wake-ups of
         * the loop saved.
         */
        CALLER_READS,
        /** Secured sockets ({@code HomaConfig.Builder.security}): datagrams sealed (encrypted and tagged) before they left. */
        DATAGRAMS_SEALED,
        /** Secured sockets: datagrams whose tag verified and that were decrypted for the engine. */
        DATAGRAMS_OPENED,
        /** Secured sockets: datagrams refused because they were not sealed (a plain Homa peer, or anything else). */
        SECURITY_NOT_SEALED,
        /** Secured sockets: sealed datagrams refused for their header (too short, a bad crypt offset, another cipher). */
        SECURITY_BAD_HEADER,
        /** Secured sockets: sealed datagrams refused because their SPI names a master key this socket does not hold. */
        SECURITY_UNKNOWN_KEY,
        /** Secured sockets: sealed datagrams whose tag did not verify (a wrong key or a changed byte). */
        SECURITY_AUTH_FAILED,
        /** Secured sockets: sealed datagrams refused as replays (an IV delivered before, or older than the window). */
        SECURITY_REPLAY,
        /**
         * Mutual-TLS sockets: datagrams that authenticated under an SPI this socket issued to
         * another peer address than the one they came from (a peer passing its packets off as another's).
         */
        SECURITY_WRONG_PEER,
        /** Mutual-TLS sockets: datagrams not sent because the socket holds no keys for the peer (its exchange ended). */
        SECURITY_NO_SEND_KEY,
        /**
         * Mutual-TLS sockets: TLS handshakes that verified the peer's certificate, either side: of
         * key exchanges, and of the TCP fallback's connections.
         */
        TLS_HANDSHAKES,
        /**
         * Mutual-TLS sockets: TLS connections refused or broken off (an untrusted or missing
         * certificate, a failed handshake or no protocol named, plaintext, a malformed frame,
         * another cipher, an address another identity holds, fallback calls to a socket without
         * the fallback).
         */
        TLS_REFUSED,
        /** Mutual-TLS sockets: SPIs (and their keys) this socket issued to peers. */
        KEYS_ISSUED,
        /** Mutual-TLS sockets: rotations of this socket's master key ({@code HomaSecurity.rotateEvery}). */
        KEY_ROTATIONS,
        /**
         * Mutual-TLS sockets: times the TCP listener stopped accepting because 64 TLS handshakes
         * were under way (new connections wait in the kernel's backlog until one ends; each ends
         * within 10 s), which bounds what unverified connections can cost.
         */
        TLS_ACCEPTS_PAUSED,
        /**
         * Calls whose future completed on the thread that waited for it, which had read the
         * response itself ({@link HomaConfig#callerReads()}): with the socket's executor, each is
         * an executor hand-off and an unpark saved ({@link #EXECUTOR_HANDOFFS} counts the others).
         */
        CALLER_COMPLETIONS,
        /**
         * Busy polling ({@link HomaConfig#busyPoll()}, on epoll where callers can read:
         * {@link HomaConfig#callerReads()}): looks at the sockets by the spinning event loop, while
         * its engine has at most two live RPCs, that found datagrams and read them itself, one
         * {@code recvfrom} each, before its select. What arrives between that look and the select
         * is not counted here (the loop reads it when its select reports it: see
         * {@link #LOOP_DIRECT_READS}); under load Netty reads.
         */
        BUSY_POLL_READS,
        /**
         * On epoll where callers can read ({@link HomaConfig#callerReads()}): times the event
         * loop, woken because a socket was readable while its engine had at most two live RPCs
         * and no message arriving, read a datagram itself with one {@code recvfrom} rather than through Netty's
         * read (a {@code getsockopt} and a {@code recvmmsg}; after a long message's first
         * segment, read so, Netty reads the rest). Under load Netty reads, and those reads are not
         * counted here.
         */
        LOOP_DIRECT_READS
    }

    private final long[] counters;
    private final long[] drops;
    private final long[] shell;
    private final int activeClientRpcs;
    private final int activeServerRpcs;
    private final long[] gauges;
    private final String transport;
    private final long[] queueDelays;
    private final int queuedRequests;
    private final Map<String, Long> requestsByPeerIdentity;

    HomaMetrics(long[] counters, long[] drops, long[] shell, int activeClientRpcs, int activeServerRpcs, long[] gauges,
                String transport, long[] queueDelays, int queuedRequests, Map<String, Long> requestsByPeerIdentity) {
        this.requestsByPeerIdentity = Map.copyOf(requestsByPeerIdentity);
        this.transport = transport;
        this.queueDelays = queueDelays;
        this.queuedRequests = queuedRequests;
        this.counters = counters;
        this.drops = drops;
        this.shell = shell;
        this.activeClientRpcs = activeClientRpcs;
        this.activeServerRpcs = activeServerRpcs;
        this.gauges = gauges;
    }

    /**
     * The Netty transport the socket runs on: {@code "io_uring"}, {@code "epoll"} or {@code "nio"}
     * (what {@link HomaConfig#ioTransport()} came to on this host, after any fallback).
     */
    public String transport() {
        return transport;
    }

    /**
     * Requests this socket received, by the verified identity of their client
     * ({@link HomaRequest#peerIdentity()}): on a secured socket, who called how often, e.g. to
     * see which caller a load comes from. Up to 1,024 identities are told apart; requests of any
     * further one count under {@code "(other)"}. Empty on a plain socket. Unmodifiable.
     */
    public Map<String, Long> requestsByPeerIdentity() {
        return requestsByPeerIdentity;
    }

    /** The names of every protocol counter (the keys of {@link #counters()}), always in the same order. */
    public static List<String> counterNames() {
        return COUNTER_NAMES;
    }

    /** The names of every drop reason (the keys {@link #drops(String)} accepts), always in the same order. */
    public static List<String> dropReasons() {
        return DROP_REASONS;
    }

    /** The names of every packet type (what {@link #packetsSent(String)} accepts), in wire order. */
    public static List<String> packetTypes() {
        return PACKET_TYPES;
    }

    private static final List<String> COUNTER_NAMES =
            Arrays.stream(Counter.values()).map(Enum::name).toList();
    private static final List<String> DROP_REASONS =
            Arrays.stream(DropReason.values()).map(Enum::name).toList();
    private static final List<String> PACKET_TYPES =
            Arrays.stream(PacketType.values()).map(Enum::name).toList();

    /**
     * Memory held now for incoming messages not yet complete (reassembly chunks plus bookkeeping),
     * summed over the engines: what {@link HomaConfig.Builder#maxBufferedBytes(long)} limits per engine.
     */
    public long bufferedBytes() {
        return gauges[MetricsSnapshot.BUFFERED];
    }

    /** Bytes of outgoing requests and responses held now (not yet released): what {@code maxOutgoingBytes} limits. */
    public long outgoingBytes() {
        return gauges[MetricsSnapshot.OUTGOING];
    }

    /** Bytes granted (or unscheduled) to our senders and not yet received, over all incoming messages. */
    public long incomingBytes() {
        return gauges[MetricsSnapshot.INCOMING];
    }

    /** Peers the engines keep state for now (summed: a peer known to two engines counts twice). */
    public long peers() {
        return gauges[MetricsSnapshot.PEERS];
    }

    /**
     * The protocol counter named {@code name} (a key of {@link #counters()}, e.g.
     * {@code "PACKETS_RETRANSMITTED"}).
     *
     * @throws HomaBadArgumentException if no protocol counter has that name
     */
    public long counter(String name) {
        return count(lookup(Counter.class, name, "protocol counter"));
    }

    private long count(Counter c) {
        return counters[c.ordinal()];
    }

    /** Every protocol counter by name, zeros included, always in the same order. */
    public Map<String, Long> counters() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (Counter c : Counter.values()) {
            m.put(c.name(), count(c));
        }
        return Collections.unmodifiableMap(m);
    }

    /** An I/O shell counter. */
    public long shell(Shell c) {
        return shell[c.ordinal()];
    }

    /**
     * Invalid datagrams dropped for the reason named {@code reason} (e.g. {@code "BAD_MAGIC"}).
     *
     * @throws HomaBadArgumentException if no drop reason has that name
     */
    public long drops(String reason) {
        return drops[lookup(DropReason.class, reason, "drop reason").ordinal()];
    }

    /** Every drop reason with a non-zero count, by name. */
    public Map<String, Long> dropsByReason() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (DropReason r : DropReason.values()) {
            if (drops[r.ordinal()] != 0) {
                m.put(r.name(), drops[r.ordinal()]);
            }
        }
        return Collections.unmodifiableMap(m);
    }

    /**
     * Packets of the type named {@code type} sent: {@code "DATA"}, {@code "GRANT"},
     * {@code "RESEND"}, {@code "RPC_UNKNOWN"}, {@code "BUSY"}, {@code "CUTOFFS"},
     * {@code "NEED_ACK"} or {@code "ACK"}.
     *
     * @throws HomaBadArgumentException if {@code type} is not one of them
     */
    public long packetsSent(String type) {
        return perType("PACKETS_SENT_", type);
    }

    /**
     * Packets of the type named {@code type} received and accepted by the decoder (names as for
     * {@link #packetsSent}).
     *
     * @throws HomaBadArgumentException if {@code type} is not a packet type
     */
    public long packetsReceived(String type) {
        return perType("PACKETS_RECEIVED_", type);
    }

    /** The counter named {@code prefix} + the packet type's name. */
    private long perType(String prefix, String type) {
        return count(Counter.valueOf(prefix + lookup(PacketType.class, type, "packet type").name()));
    }

    private static <E extends Enum<E>> E lookup(Class<E> kind, String name, String what) {
        if (name == null) {
            throw new HomaBadArgumentException(what + " name must not be null");
        }
        try {
            return Enum.valueOf(kind, name);
        } catch (IllegalArgumentException e) {
            throw new HomaBadArgumentException("no " + what + " is named \"" + name + "\"");
        }
    }

    /** DATA segments sent again because the receiver asked (RESEND). */
    public long retransmissions() {
        return count(Counter.PACKETS_RETRANSMITTED);
    }

    /** Client RPCs failed because the server was silent too long (deadline expiries not included). */
    public long timeouts() {
        return count(Counter.TIMEOUTS);
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
        return count(Counter.CLIENT_RPCS_COMPLETED) + count(Counter.SERVER_RPCS_COMPLETED);
    }

    /** Requests waiting for a handler thread when the snapshot was taken (a gauge). */
    public int queuedRequests() {
        return queuedRequests;
    }

    /**
     * How long requests waited for a handler thread, over the socket's life: element {@code i}
     * counts the handlers that started after a wait of {@code [2^i, 2^(i+1))} microseconds
     * (element 0 also counts shorter waits), 32 elements. A fresh copy. Requests refused or dropped
     * unrun are not in it (see {@link Shell#REQUESTS_SHED}, {@link Shell#REQUESTS_EXPIRED}).
     */
    public long[] queueDelayHistogram() {
        return queueDelays.clone();
    }

    /**
     * The queue delay at {@code quantile} (0 to 1) of {@link #queueDelayHistogram()}, in
     * microseconds: the upper end of the bucket it falls in (so within a factor of two above the
     * true value), 0 if no handler has started.
     *
     * @throws HomaBadArgumentException if {@code quantile} is not in [0, 1]
     */
    public long queueDelayMicros(double quantile) {
        if (!(quantile >= 0 && quantile <= 1)) {
            throw new HomaBadArgumentException("quantile must be in [0, 1], was " + quantile);
        }
        long total = 0;
        for (long n : queueDelays) {
            total += n;
        }
        if (total == 0) {
            return 0;
        }
        long rank = Math.max(1, (long) Math.ceil(quantile * total));
        long seen = 0;
        for (int i = 0; i < queueDelays.length; i++) {
            seen += queueDelays[i];
            if (seen >= rank) {
                return 1L << (i + 1);
            }
        }
        return 1L << queueDelays.length;
    }

    /** Invalid datagrams dropped, all reasons. */
    public long droppedPackets() {
        return count(Counter.PACKETS_DROPPED);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("HomaMetrics{").append(transport)
                .append(" active=").append(activeClientRpcs).append("c/").append(activeServerRpcs).append('s');
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
        Map<String, Long> d = dropsByReason();
        if (!d.isEmpty()) {
            sb.append(" drops=").append(d);
        }
        return sb.append('}').toString();
    }
}
