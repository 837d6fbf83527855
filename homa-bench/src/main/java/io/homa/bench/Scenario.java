package io.homa.bench;

import java.util.List;

/**
 * The scenarios of the {@code compare} command. Sizes are decimal (1MB = 1,000,000 bytes).
 *
 * <ul>
 * <li>{@code unloaded-*}: one caller, one call at a time (closed loop): the latency floor.</li>
 * <li>{@code loaded-100B}: 100 B calls, one at a time, while 1 MB background calls arrive
 *     open-loop at a fixed offered rate (Poisson arrivals, seeded: the same for every transport;
 *     see {@link PoissonLoad}) <em>through the same client</em> (one gRPC channel, one Homa socket,
 *     one connection pool) to the same server: head-of-line blocking shows on tcp-single. The
 *     probe's phases are timed, so every transport's measured interval sees the same arrivals.</li>
 * <li>{@code loaded-100B-4clients}: the same probe on its own client while the same background
 *     arrives round-robin through four other clients: only the server and the host are shared.</li>
 * <li>{@code throughput-*}: a window of calls kept outstanding; calls/s and payload Gbit/s.</li>
 * <li>{@code incast-1MB-8clients} (on request, not in the full or quick set): eight clients each
 *     start a 1 MB call at the same moment, round after round, so that eight requests arrive at
 *     the server at once (and eight responses leave it); a round's latency is its slowest call's.
 *     For what a receiver meets when many senders start at once: unscheduled bytes arrive
 *     unasked, as many as each sender sends before a grant.</li>
 * </ul>
 */
public enum Scenario {
    UNLOADED_100B("unloaded-100B", Kind.UNLOADED, 100, 1, 3_000, 20_000),
    UNLOADED_1KB("unloaded-1KB", Kind.UNLOADED, 1_000, 1, 2_000, 10_000),
    UNLOADED_10KB("unloaded-10KB", Kind.UNLOADED, 10_000, 1, 1_000, 5_000),
    UNLOADED_1MB("unloaded-1MB", Kind.UNLOADED, 1_000_000, 1, 40, 400),
    LOADED_100B("loaded-100B", Kind.LOADED, 100, 1, 1_000, 10_000),
    LOADED_100B_4CLIENTS("loaded-100B-4clients", Kind.LOADED, 100, 1, 1_000, 10_000),
    THROUGHPUT_1MB("throughput-1MB", Kind.THROUGHPUT, 1_000_000, 4, 40, 2_000),
    THROUGHPUT_100B("throughput-100B", Kind.THROUGHPUT, 100, 64, 40_000, 400_000),
    /** Window = clients; calls are rounds (each of {@code window} calls). */
    INCAST_1MB_8CLIENTS("incast-1MB-8clients", Kind.INCAST, 1_000_000, 8, 10, 200);

    /** What a scenario measures. */
    public enum Kind { UNLOADED, LOADED, THROUGHPUT, INCAST }

    /** Size of the background calls of the loaded scenarios. */
    public static final int BACKGROUND_SIZE = 1_000_000;

    /** The scenarios of {@code compare --quick}. */
    public static final List<Scenario> QUICK = List.of(UNLOADED_100B, UNLOADED_10KB, UNLOADED_1MB, LOADED_100B, THROUGHPUT_1MB);
    /** The scenarios of a full {@code compare}. */
    public static final List<Scenario> FULL = List.of(UNLOADED_100B, UNLOADED_1KB, UNLOADED_10KB, UNLOADED_1MB,
            LOADED_100B, LOADED_100B_4CLIENTS, THROUGHPUT_1MB, THROUGHPUT_100B);
    /** The scenarios of the hidden {@code --smoke} run (tests). */
    public static final List<Scenario> SMOKE = List.of(UNLOADED_100B, LOADED_100B, THROUGHPUT_1MB);

    private final String id;
    private final Kind kind;
    private final int size;
    private final int window;
    private final int warmupCalls;
    private final int measuredCalls;

    Scenario(String id, Kind kind, int size, int window, int warmupCalls, int measuredCalls) {
        this.id = id;
        this.kind = kind;
        this.size = size;
        this.window = window;
        this.warmupCalls = warmupCalls;
        this.measuredCalls = measuredCalls;
    }

    /** The name in results.json and on the command line. */
    public String id() {
        return id;
    }

    public Kind kind() {
        return kind;
    }

    /** Bytes per (probe) call. */
    public int size() {
        return size;
    }

    /** Calls kept outstanding (1 for the latency scenarios; the clients of an incast). */
    public int window() {
        return window;
    }

    /** Background clients apart from the probe's (0: the background shares the probe's client). */
    public int backgroundClients() {
        return this == LOADED_100B_4CLIENTS ? 4 : 0;
    }

    /** Whether the scenario is about latency (drawn in the chart). */
    public boolean isLatency() {
        return kind != Kind.THROUGHPUT;
    }

    /**
     * Whether {@code transport} runs in this scenario (udp-raw has no 1 MB background calls;
     * homa-2loops runs the throughput scenarios only, udp-spin the unloaded ones only; an incast
     * needs clients whose calls do not block).
     */
    public boolean appliesTo(Transport transport) {
        if (!transport.supports(size) || transport.throughputOnly() && kind != Kind.THROUGHPUT
                || transport.unloadedOnly() && kind != Kind.UNLOADED
                || kind == Kind.INCAST && transport.blockingClients()) {
            return false;
        }
        return kind != Kind.LOADED || transport.supports(BACKGROUND_SIZE);
    }

    int warmupCalls(RunMode mode) {
        return mode == RunMode.SMOKE ? Math.max(2, Math.min(20, warmupCalls / 10)) : mode.scale(warmupCalls);
    }

    int measuredCalls(RunMode mode) {
        return mode == RunMode.SMOKE ? Math.max(10, Math.min(200, measuredCalls / 10)) : mode.scale(measuredCalls);
    }

    /** The scenario called {@code id}. */
    public static Scenario byId(String id) {
        for (Scenario s : values()) {
            if (s.id.equalsIgnoreCase(id)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown scenario '" + id + "'");
    }
}
