package io.homa.micrometer;

import io.homa.CallListener;
import io.homa.HomaMetrics;
import io.homa.HomaSocket;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.micrometer.core.instrument.binder.MeterBinder;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * Micrometer meters for one {@link HomaSocket}: every protocol and shell counter as a
 * {@link FunctionCounter}, the socket's live state as gauges, and client call latency as a
 * {@link Timer} with a percentile histogram, split by message-size class. docs/observability.md
 * lists every meter.
 *
 * <pre>{@code
 * HomaMetricsBinder binder = new HomaMetricsBinder(socket, Tags.of("socket", "orders"));
 * binder.bindTo(registry);
 * ...
 * binder.close(); // stops timing calls (the counters keep their last values)
 * }</pre>
 *
 * <p><b>Cost.</b> Counters and gauges read one {@link HomaSocket#metrics()} snapshot (one hand-off
 * to each event loop), taken at most once per {@code maxSnapshotAge} however many meters a scrape
 * reads. The timers cost one {@link Timer#record} per call, on the socket's event loop (see
 * {@link CallListener}). Binding to several registries shares the snapshot but times each call
 * once per registry.
 *
 * <p><b>Threads.</b> {@link #bindTo} and {@link #close} from any thread; the registry reads the
 * meters from its own threads.
 */
public final class HomaMetricsBinder implements MeterBinder, AutoCloseable {
    /** Upper bounds (bytes, inclusive) of the size classes of the {@code size} tag, and their names. */
    private static final int[] SIZE_BOUNDS = {1024, 64 * 1024, 1024 * 1024};
    private static final String[] SIZE_CLASSES = {"le1KiB", "le64KiB", "le1MiB", "gt1MiB"};
    static final String CLIENT_DURATION = "homa.rpc.client.duration";

    private final HomaSocket socket;
    private final Tags tags;
    private final Snapshots snapshots;
    private final List<CallListener> listeners = new ArrayList<>();
    /** Registries bound so far, and the peer identities that have a counter in them (secured sockets). */
    private final List<MeterRegistry> registries = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final java.util.Set<String> identities = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** Binds {@code socket} with no extra tags and snapshots at most 1 s old. */
    public HomaMetricsBinder(HomaSocket socket) {
        this(socket, Tags.empty(), Duration.ofSeconds(1));
    }

    /** Binds {@code socket} with {@code tags} on every meter and snapshots at most 1 s old. */
    public HomaMetricsBinder(HomaSocket socket, Iterable<Tag> tags) {
        this(socket, tags, Duration.ofSeconds(1));
    }

    /**
     * @param tags added to every meter (e.g. the socket's role or port)
     * @param maxSnapshotAge how long one metrics snapshot serves the counters and gauges (zero:
     *                       a fresh snapshot for every meter read)
     * @throws IllegalArgumentException if an argument is null or the age is negative
     */
    public HomaMetricsBinder(HomaSocket socket, Iterable<Tag> tags, Duration maxSnapshotAge) {
        if (socket == null || tags == null || maxSnapshotAge == null || maxSnapshotAge.isNegative()) {
            throw new IllegalArgumentException("socket, tags and a non-negative maxSnapshotAge are required");
        }
        this.socket = socket;
        this.tags = Tags.of(tags);
        this.snapshots = new Snapshots(socket, maxSnapshotAge.toNanos(), this::identitiesSeen);
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        for (String type : HomaMetrics.packetTypes()) {
            Tags t = tags.and("type", type.toLowerCase(Locale.ROOT));
            counter(registry, "homa.packets.sent", t, null, "Homa packets sent, by type",
                    m -> m.packetsSent(type));
            counter(registry, "homa.packets.received", t, null,
                    "Homa packets received and accepted, by type", m -> m.packetsReceived(type));
        }
        for (String reason : HomaMetrics.dropReasons()) {
            counter(registry, "homa.packets.dropped", tags.and("reason", reason.toLowerCase(Locale.ROOT)),
                    null, "Invalid datagrams dropped, by reason", m -> m.drops(reason));
        }
        for (String name : HomaMetrics.counterNames()) {
            bindProtocolCounter(registry, name);
        }
        for (HomaMetrics.Shell c : HomaMetrics.Shell.values()) {
            boolean bytes = c.name().startsWith("BYTES_");
            String meter = "homa.shell." + dotted(bytes ? c.name().substring("BYTES_".length()) : c.name());
            counter(registry, meter, tags, bytes ? BaseUnits.BYTES : null, "Homa I/O shell counter " + c.name(),
                    m -> m.shell(c));
        }
        gauge(registry, "homa.rpcs.active", tags.and("role", "client"), null, "Live RPCs, by role",
                HomaMetrics::activeClientRpcs);
        gauge(registry, "homa.rpcs.active", tags.and("role", "server"), null, "Live RPCs, by role",
                HomaMetrics::activeServerRpcs);
        gauge(registry, "homa.buffered", tags, BaseUnits.BYTES,
                "Memory held for incoming messages not yet complete", HomaMetrics::bufferedBytes);
        gauge(registry, "homa.outgoing", tags, BaseUnits.BYTES,
                "Bytes of outgoing messages held until released", HomaMetrics::outgoingBytes);
        gauge(registry, "homa.incoming.granted", tags, BaseUnits.BYTES,
                "Bytes granted or unscheduled and not yet received", HomaMetrics::incomingBytes);
        gauge(registry, "homa.peers", tags, null, "Peers with state in the engines", HomaMetrics::peers);
        gauge(registry, "homa.requests.queued", tags, null, "Requests waiting for a handler thread",
                HomaMetrics::queuedRequests);
        for (double q : new double[]{0.5, 0.99, 0.999}) {
            gauge(registry, "homa.requests.queue.delay", tags.and("quantile", Double.toString(q)), "seconds",
                    "How long requests waited for a handler thread (upper end of a power-of-two bucket), by quantile",
                    m -> m.queueDelayMicros(q) / 1e6);
        }
        bindTimers(registry);
        registries.add(registry);
        for (String id : identities) {
            bindIdentity(registry, id);
        }
        identitiesSeen(snapshots.get());
    }

    /**
     * Gives each peer identity a snapshot shows its counter in every registry: identities appear as
     * clients call (certificate subjects, at most 1,024 per socket), so their meters are made as
     * scrapes find them.
     */
    private void identitiesSeen(HomaMetrics m) {
        for (String id : m.requestsByPeerIdentity().keySet()) {
            if (identities.add(id)) {
                for (MeterRegistry r : registries) {
                    bindIdentity(r, id);
                }
            }
        }
    }

    private void bindIdentity(MeterRegistry registry, String id) {
        counter(registry, "homa.requests.by.peer", tags.and("peer.identity", id), null,
                "Requests received, by the verified identity of their client (secured sockets)",
                m -> m.requestsByPeerIdentity().getOrDefault(id, 0L));
    }

    /**
     * A protocol counter under its meter name: packets by type and drops are bound above (their
     * totals too: {@code PACKETS_DROPPED} is the sum over reasons), RPC lifecycle counters share
     * names with a {@code role} tag, bytes get base unit bytes, the rest {@code homa.<name>}.
     */
    private void bindProtocolCounter(MeterRegistry registry, String name) {
        if (name.startsWith("PACKETS_SENT_") || name.startsWith("PACKETS_RECEIVED_") || name.equals("PACKETS_DROPPED")) {
            return;
        }
        Tags t = tags;
        String meter;
        String unit = null;
        if (name.startsWith("CLIENT_RPCS_") || name.startsWith("SERVER_RPCS_")) {
            t = tags.and("role", name.startsWith("CLIENT_") ? "client" : "server");
            meter = "homa.rpcs." + dotted(name.substring("CLIENT_RPCS_".length()));
        } else if (name.equals("TIMEOUTS")) {
            t = tags.and("role", "client");
            meter = "homa.rpcs.timed.out";
        } else if (name.equals("BYTES_SENT")) {
            meter = "homa.transmitted";
            unit = BaseUnits.BYTES;
        } else if (name.equals("BYTES_RECEIVED")) {
            meter = "homa.received";
            unit = BaseUnits.BYTES;
        } else if (name.equals("BYTES_RETRANSMITTED")) {
            meter = "homa.retransmitted";
            unit = BaseUnits.BYTES;
        } else {
            meter = "homa." + dotted(name);
        }
        // One description per meter name: Prometheus keeps one help text per metric family.
        counter(registry, meter, t, unit, "Homa protocol counter " + meter, m -> m.counter(name));
    }

    private static String dotted(String name) {
        return name.toLowerCase(Locale.ROOT).replace('_', '.');
    }

    private void counter(MeterRegistry registry, String name, Tags t, String unit, String description,
                         ToDoubleFunction<HomaMetrics> f) {
        // The registry holds the socket weakly (as long as the application keeps it) and this function strongly.
        FunctionCounter.builder(name, socket, x -> f.applyAsDouble(snapshots.get()))
                .tags(t).baseUnit(unit).description(description).register(registry);
    }

    private void gauge(MeterRegistry registry, String name, Tags t, String unit, String description,
                       ToDoubleFunction<HomaMetrics> f) {
        Gauge.builder(name, socket, x -> f.applyAsDouble(snapshots.get()))
                .tags(t).baseUnit(unit).description(description).register(registry);
    }

    /** One timer per size class and outcome, made now so that the event loop only records. */
    private void bindTimers(MeterRegistry registry) {
        Timer[][] timers = new Timer[SIZE_CLASSES.length][2];
        for (int i = 0; i < SIZE_CLASSES.length; i++) {
            for (int ok = 0; ok < 2; ok++) {
                timers[i][ok] = Timer.builder(CLIENT_DURATION)
                        .description("Client call latency, by the larger of request and response size")
                        .tags(tags.and("size", SIZE_CLASSES[i], "outcome", ok == 1 ? "success" : "failure"))
                        .publishPercentileHistogram()
                        .minimumExpectedValue(Duration.ofNanos(10_000))
                        .maximumExpectedValue(Duration.ofSeconds(30))
                        .register(registry);
            }
        }
        CallListener l = (InetSocketAddress server, int requestBytes, int responseBytes, long nanos) ->
                timers[sizeClass(Math.max(requestBytes, responseBytes))][responseBytes < 0 ? 0 : 1]
                        .record(nanos, TimeUnit.NANOSECONDS);
        synchronized (listeners) {
            listeners.add(l);
        }
        socket.addCallListener(l);
    }

    /** The index of the size class of a message of {@code bytes}. */
    static int sizeClass(int bytes) {
        for (int i = 0; i < SIZE_BOUNDS.length; i++) {
            if (bytes <= SIZE_BOUNDS[i]) {
                return i;
            }
        }
        return SIZE_BOUNDS.length;
    }

    /** Stops timing calls for every registry bound so far. Idempotent. */
    @Override
    public void close() {
        synchronized (listeners) {
            for (CallListener l : listeners) {
                socket.removeCallListener(l);
            }
            listeners.clear();
        }
    }

    /** The latest metrics snapshot, refreshed when older than the maximum age. */
    private static final class Snapshots {
        private final HomaSocket socket;
        private final long maxAgeNanos;
        private final java.util.function.Consumer<HomaMetrics> onFresh;
        private HomaMetrics last;
        private long takenAt;

        Snapshots(HomaSocket socket, long maxAgeNanos, java.util.function.Consumer<HomaMetrics> onFresh) {
            this.socket = socket;
            this.maxAgeNanos = maxAgeNanos;
            this.onFresh = onFresh;
        }

        HomaMetrics get() {
            HomaMetrics m;
            boolean fresh = false;
            synchronized (this) {
                long now = System.nanoTime();
                if (last == null || now - takenAt > maxAgeNanos) {
                    last = socket.metrics();
                    takenAt = now;
                    fresh = true;
                }
                m = last;
            }
            if (fresh) {
                onFresh.accept(m); // outside the lock: it registers meters, whose reads come back here
            }
            return m;
        }
    }
}
