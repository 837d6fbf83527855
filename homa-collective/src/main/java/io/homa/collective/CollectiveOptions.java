package io.homa.collective;

import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link CollectiveGroup} runs its operations. Immutable; start from {@link #defaults()}.
 * Every rank of a group must use the same segment size, algorithm, halving-doubling limit and
 * group id (they decide the schedule of messages; ranks that differ fail with
 * {@link CollectiveMismatchException}).
 */
public final class CollectiveOptions {
    private static final CollectiveOptions DEFAULTS = new CollectiveOptions(Duration.ofSeconds(60), 1 << 20,
            Algorithm.AUTO, 1 << 20, 0, 1L << 30, 4);

    private final Duration deadline;
    private final int segmentBytes;
    private final Algorithm algorithm;
    private final int halvingDoublingMaxBytes;
    private final int groupId;
    private final long maxEarlyBytes;
    private final int segmentsInFlight;

    private CollectiveOptions(Duration deadline, int segmentBytes, Algorithm algorithm, int halvingDoublingMaxBytes,
                              int groupId, long maxEarlyBytes, int segmentsInFlight) {
        this.segmentsInFlight = segmentsInFlight;
        this.deadline = deadline;
        this.segmentBytes = segmentBytes;
        this.algorithm = algorithm;
        this.halvingDoublingMaxBytes = halvingDoublingMaxBytes;
        this.groupId = groupId;
        this.maxEarlyBytes = maxEarlyBytes;
    }

    /**
     * Deadline 60 s, 1 MiB segments, {@link Algorithm#AUTO}, halving-doubling up to 1 MiB, group id
     * 0, 1 GiB early data, 4 segments in flight per peer.
     */
    public static CollectiveOptions defaults() {
        return DEFAULTS;
    }

    /** Each operation fails with {@link CollectiveTimeoutException} if it has not finished this long after it started on this rank. */
    public Duration deadline() {
        return deadline;
    }

    /**
     * The largest message (bytes of elements): a step's data travels in segments of at most this
     * many bytes, pipelined (the next step forwards a segment as soon as it arrived). Each
     * message is a 48-byte header and a segment, so over Homa {@code segmentBytes + 48} must not
     * exceed {@code HomaConfig.maxMessageLength()} ({@link CollectiveGroup#overHoma} checks).
     */
    public int segmentBytes() {
        return segmentBytes;
    }

    public Algorithm algorithm() {
        return algorithm;
    }

    /** {@link Algorithm#AUTO} uses halving-doubling for all-reduces of at most this many bytes. */
    public int halvingDoublingMaxBytes() {
        return halvingDoublingMaxBytes;
    }

    /**
     * Every message carries it: a message from a rank of another group (a misconfigured member
     * list, a stale process on a reused port) is refused as a mismatch. One socket serves one group.
     */
    public int groupId() {
        return groupId;
    }

    /**
     * Bytes this rank holds for operations it has not started yet (a faster rank's messages); beyond
     * it, such messages are refused and the sender's operation fails.
     */
    public long maxEarlyBytes() {
        return maxEarlyBytes;
    }

    /** @throws IllegalArgumentException if {@code v} is null, zero, negative or above 100 days */
    public CollectiveOptions withDeadline(Duration v) {
        if (v == null || v.isZero() || v.isNegative() || v.compareTo(Duration.ofDays(100)) > 0) {
            throw new IllegalArgumentException("deadline must be positive and at most 100 days, not " + v);
        }
        return new CollectiveOptions(v, segmentBytes, algorithm, halvingDoublingMaxBytes, groupId, maxEarlyBytes, segmentsInFlight);
    }

    /** @throws IllegalArgumentException if {@code v} is below 64 or above 64 MiB */
    public CollectiveOptions withSegmentBytes(int v) {
        if (v < 64 || v > 64 << 20) {
            throw new IllegalArgumentException("segmentBytes must be in [64, 64 MiB], not " + v);
        }
        return new CollectiveOptions(deadline, v, algorithm, halvingDoublingMaxBytes, groupId, maxEarlyBytes, segmentsInFlight);
    }

    /** @throws IllegalArgumentException if {@code v} is null */
    public CollectiveOptions withAlgorithm(Algorithm v) {
        if (v == null) {
            throw new IllegalArgumentException("algorithm must not be null (use Algorithm.AUTO)");
        }
        return new CollectiveOptions(deadline, segmentBytes, v, halvingDoublingMaxBytes, groupId, maxEarlyBytes, segmentsInFlight);
    }

    /** @throws IllegalArgumentException if {@code v} is negative */
    public CollectiveOptions withHalvingDoublingMaxBytes(int v) {
        if (v < 0) {
            throw new IllegalArgumentException("halvingDoublingMaxBytes must not be negative, not " + v);
        }
        return new CollectiveOptions(deadline, segmentBytes, algorithm, v, groupId, maxEarlyBytes, segmentsInFlight);
    }

    public CollectiveOptions withGroupId(int v) {
        return new CollectiveOptions(deadline, segmentBytes, algorithm, halvingDoublingMaxBytes, v, maxEarlyBytes, segmentsInFlight);
    }

    /** @throws IllegalArgumentException if {@code v} is negative */
    public CollectiveOptions withMaxEarlyBytes(long v) {
        if (v < 0) {
            throw new IllegalArgumentException("maxEarlyBytes must not be negative, not " + v);
        }
        return new CollectiveOptions(deadline, segmentBytes, algorithm, halvingDoublingMaxBytes, groupId, v, segmentsInFlight);
    }

    /**
     * Most segments one operation has sent to one peer and not yet had acknowledged: the
     * pipeline's depth (operations running at once each have their own). A step's further
     * segments wait on this rank (not yet copied out of the caller's buffer) until one is
     * acknowledged.
     */
    public int segmentsInFlight() {
        return segmentsInFlight;
    }

    /** @throws IllegalArgumentException if {@code v} is below 1 */
    public CollectiveOptions withSegmentsInFlight(int v) {
        if (v < 1) {
            throw new IllegalArgumentException("segmentsInFlight must be at least 1, not " + v);
        }
        return new CollectiveOptions(deadline, segmentBytes, algorithm, halvingDoublingMaxBytes, groupId, maxEarlyBytes, v);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CollectiveOptions c && deadline.equals(c.deadline) && segmentBytes == c.segmentBytes
                && algorithm == c.algorithm && halvingDoublingMaxBytes == c.halvingDoublingMaxBytes
                && groupId == c.groupId && maxEarlyBytes == c.maxEarlyBytes && segmentsInFlight == c.segmentsInFlight;
    }

    @Override
    public int hashCode() {
        return Objects.hash(deadline, segmentBytes, algorithm, halvingDoublingMaxBytes, groupId, maxEarlyBytes, segmentsInFlight);
    }

    @Override
    public String toString() {
        return "CollectiveOptions{deadline=" + deadline + ", segmentBytes=" + segmentBytes + ", algorithm=" + algorithm
                + ", halvingDoublingMaxBytes=" + halvingDoublingMaxBytes + ", groupId=" + groupId
                + ", maxEarlyBytes=" + maxEarlyBytes + ", segmentsInFlight=" + segmentsInFlight + "}";
    }
}
