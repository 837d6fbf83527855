package io.homa.core;

import io.homa.core.wire.WireFormat;

import java.util.Arrays;

/**
 * Every tunable of the Homa engine, immutable and validated. Defaults follow Linux Homa (see
 * docs/tuning.md) except where noted. Build one with {@link #builder()}; {@link #defaults()} is
 * the default configuration.
 */
public final class EngineConfig {
    /** Largest message the engine sends or accepts. Linux Homa stops at 1,000,000 B. */
    public final int maxMessageLength;
    /** Largest IP datagram (MTU of the path); the segment size follows from it. */
    public final int mtu;
    /** Bytes in front of each Homa packet: 28 for IPv4+UDP, 48 for IPv6+UDP. */
    public final int ipUdpOverhead;
    /** Bytes of each message sent blind, before any grant (rounded up to whole segments). */
    public final int unscheduledBytes;
    /** Receiver: total bytes it may have granted but not yet received, over all messages. */
    public final int maxIncoming;
    /** Receiver: how many messages may be granted at once. */
    public final int maxOvercommit;
    /** Receiver: bytes granted ahead of received per message; 0 means maxIncoming/(N+1). */
    public final int grantWindow;
    /** Receiver: thousandths of granted bytes that go to the oldest message (anti-starvation). */
    public final int grantFifoFraction;
    /** Receiver: size of each FIFO grant. */
    public final int fifoGrantIncrement;
    /**
     * Receiver: a GRANT goes out once a message's window can grow by this many segments (or by a
     * quarter of the window, if that is less), not after every DATA packet; the first grant of a
     * message, a change of its priority and a sender with nothing left granted get one at once.
     * 1 grants whenever the window can grow by one segment (no batching).
     */
    public final int grantBatchSegments;
    /** Unscheduled cutoffs: index = level, value = largest message length for that level. */
    private final int[] unscheduledCutoffs;
    /** The highest priority level used for scheduled (granted) data; levels above are unscheduled. */
    public final int maxScheduledPriority;
    /** Unscheduled priority before the receiver's cutoffs are known. */
    public final int defaultUnscheduledPriority;
    /** Sender: link rate the pacer assumes, in Mbit/s. */
    public final long linkMbps;
    /** Sender: estimated transmit backlog allowed before the pacer holds data back, in ns. */
    public final long maxNicQueueNanos;
    /** Sender: messages shorter than this are never held back by the pacer. */
    public final int throttleMinBytes;
    /**
     * Sender: how much of a late pacer wake-up is made up, in ns of link time. When the engine is
     * polled after the link, as the pacer models it, ran dry while data was held back, the pacer
     * lets the sender hand the link the bytes it could have carried meanwhile, up to this much
     * ({@code linkMbps} x this) on top of {@link #maxNicQueueNanos}. 0 loses the time (the link idles).
     */
    public final long pacerLateCreditNanos;
    /** Whether the pacer is on. */
    public final boolean pacerEnabled;
    /** Most equal-size segments grouped into one transmit (one GSO send). */
    public final int maxGsoSegments;
    /**
     * Whether DATA transmits of a message whose payload is all direct memory (1 KiB at least, in
     * segments of 16 KiB at least: below, the copy is cheaper) carry only headers
     * in the transmit buffer and name the payload range instead ({@link Transmit#payloadByReference()}),
     * so a shell can send slices of the caller's buffer. Off: every payload byte is copied into the
     * transmit buffer (what the simulator and a heap payload need anyway).
     */
    public final boolean sendPayloadByReference;
    /** Timer tick, in ns. */
    public final long tickNanos;
    /** Silent ticks before the first RESEND. */
    public final int resendTicks;
    /** Ticks between RESENDs after the first. */
    public final int resendIntervalTicks;
    /** Silent ticks before an RPC is aborted with a timeout. */
    public final int timeoutTicks;
    /**
     * Server: silent ticks after its response is sent before it asks the client for an ACK (at least
     * the client's {@link #ackDelayTicks} plus the measured round trip).
     */
    public final int needAckTicks;
    /**
     * Client: ticks an acknowledgement may wait to ride on a DATA packet to the same peer before it
     * goes in an ACK packet of its own (a full batch of {@code WireFormat.MAX_ACKS} goes at once).
     */
    public final int ackDelayTicks;
    /**
     * Most share of {@link #linkMbps}, in percent, that timer packets (RESEND, NEED_ACK, BUSY) may
     * take; beyond it they wait for later ticks. On a datacenter link the share is thousands of
     * packets per tick and never reached; on a slow or overloaded link it keeps the timer's own
     * traffic from feeding the queues that made the answers late.
     */
    public final int timerTrafficPercent;
    /** Server: ticks a finished RPC's id is remembered so that late duplicates are not re-delivered. */
    public final int tombstoneTicks;
    /** Receiver: minimum interval between CUTOFFS packets to one peer, in ns. */
    public final long cutoffsIntervalNanos;
    /** Client: how often a request may be restarted after RPC_UNKNOWN before the RPC fails. */
    public final int maxRestarts;
    /** Server: most live server RPCs per peer. */
    public final int maxServerRpcsPerPeer;
    /** Most live RPCs (client and server) in one engine. */
    public final int maxRpcs;
    /**
     * Most bytes of memory held for incoming messages not yet complete, in one engine: their
     * reassembly chunks plus the engine's bookkeeping for each such message.
     */
    public final long maxBufferedBytes;
    /**
     * Most bytes of memory held for incoming messages not yet complete from one peer address (counted
     * like {@link #maxBufferedBytes}), so that one peer cannot take the whole engine's buffer. A value
     * above {@code maxBufferedBytes} has no effect beyond it.
     */
    public final long maxBufferedBytesPerPeer;
    /**
     * Most bytes of outgoing messages (requests and responses) that the engine holds at once: a
     * message counts from {@link HomaEngine#startRequest}/{@link HomaEngine#respond} until the engine
     * releases its payload (response received, RPC failed or aborted, response acknowledged or
     * abandoned). Beyond it those calls throw {@link EngineLimitException}.
     */
    public final long maxOutgoingBytes;
    /** Number of engines sharing an id space (e.g. one per event loop on one port). */
    public final int idShardCount;
    /** This engine's index among {@link #idShardCount}; encoded in the low bits of its client ids. */
    public final int idShard;
    /** Test-only: send messages in the order they were created instead of SRPT. Never in production. */
    public final boolean fifoSendOrderForTests;
    /** Test-only: send every unscheduled byte at level 0, ignoring cutoffs. Never in production. */
    public final boolean unscheduledAtLevelZeroForTests;
    /** Test-only: grant messages in arrival order instead of SRPT (the simulator's ablation). */
    public final boolean fifoGrantOrderForTests;

    private EngineConfig(Builder b) {
        this.maxMessageLength = b.maxMessageLength;
        this.mtu = b.mtu;
        this.ipUdpOverhead = b.ipUdpOverhead;
        this.unscheduledBytes = b.unscheduledBytes;
        this.maxIncoming = b.maxIncoming;
        this.maxOvercommit = b.maxOvercommit;
        this.grantWindow = b.grantWindow;
        this.grantFifoFraction = b.grantFifoFraction;
        this.fifoGrantIncrement = b.fifoGrantIncrement;
        this.grantBatchSegments = b.grantBatchSegments;
        this.unscheduledCutoffs = b.unscheduledCutoffs.clone();
        this.maxScheduledPriority = b.maxScheduledPriority;
        this.defaultUnscheduledPriority = b.defaultUnscheduledPriority;
        this.linkMbps = b.linkMbps;
        this.maxNicQueueNanos = b.maxNicQueueNanos;
        this.throttleMinBytes = b.throttleMinBytes;
        this.pacerLateCreditNanos = b.pacerLateCreditNanos;
        this.pacerEnabled = b.pacerEnabled;
        this.maxGsoSegments = b.maxGsoSegments;
        this.sendPayloadByReference = b.sendPayloadByReference;
        this.tickNanos = b.tickNanos;
        this.resendTicks = b.resendTicks;
        this.resendIntervalTicks = b.resendIntervalTicks;
        this.timeoutTicks = b.timeoutTicks;
        this.needAckTicks = b.needAckTicks;
        this.ackDelayTicks = b.ackDelayTicks;
        this.timerTrafficPercent = b.timerTrafficPercent;
        this.tombstoneTicks = b.tombstoneTicks;
        this.cutoffsIntervalNanos = b.cutoffsIntervalNanos;
        this.maxRestarts = b.maxRestarts;
        this.maxServerRpcsPerPeer = b.maxServerRpcsPerPeer;
        this.maxRpcs = b.maxRpcs;
        this.maxBufferedBytes = b.maxBufferedBytes;
        this.maxBufferedBytesPerPeer = b.maxBufferedBytesPerPeer;
        this.maxOutgoingBytes = b.maxOutgoingBytes;
        this.idShardCount = b.idShardCount;
        this.idShard = b.idShard;
        this.fifoSendOrderForTests = b.fifoSendOrderForTests;
        this.unscheduledAtLevelZeroForTests = b.unscheduledAtLevelZeroForTests;
        this.fifoGrantOrderForTests = b.fifoGrantOrderForTests;
    }

    private static final EngineConfig DEFAULTS = builder().build();

    /** The default configuration. */
    public static EngineConfig defaults() {
        return DEFAULTS;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder initialised with this configuration's values. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.maxMessageLength = maxMessageLength;
        b.mtu = mtu;
        b.ipUdpOverhead = ipUdpOverhead;
        b.unscheduledBytes = unscheduledBytes;
        b.maxIncoming = maxIncoming;
        b.maxOvercommit = maxOvercommit;
        b.grantWindow = grantWindow;
        b.grantFifoFraction = grantFifoFraction;
        b.fifoGrantIncrement = fifoGrantIncrement;
        b.grantBatchSegments = grantBatchSegments;
        b.unscheduledCutoffs = unscheduledCutoffs.clone();
        b.maxScheduledPriority = maxScheduledPriority;
        b.defaultUnscheduledPriority = defaultUnscheduledPriority;
        b.linkMbps = linkMbps;
        b.maxNicQueueNanos = maxNicQueueNanos;
        b.throttleMinBytes = throttleMinBytes;
        b.pacerLateCreditNanos = pacerLateCreditNanos;
        b.pacerEnabled = pacerEnabled;
        b.maxGsoSegments = maxGsoSegments;
        b.sendPayloadByReference = sendPayloadByReference;
        b.tickNanos = tickNanos;
        b.resendTicks = resendTicks;
        b.resendIntervalTicks = resendIntervalTicks;
        b.timeoutTicks = timeoutTicks;
        b.needAckTicks = needAckTicks;
        b.ackDelayTicks = ackDelayTicks;
        b.timerTrafficPercent = timerTrafficPercent;
        b.tombstoneTicks = tombstoneTicks;
        b.cutoffsIntervalNanos = cutoffsIntervalNanos;
        b.maxRestarts = maxRestarts;
        b.maxServerRpcsPerPeer = maxServerRpcsPerPeer;
        b.maxRpcs = maxRpcs;
        b.maxBufferedBytes = maxBufferedBytes;
        b.maxBufferedBytesPerPeer = maxBufferedBytesPerPeer;
        b.maxOutgoingBytes = maxOutgoingBytes;
        b.idShardCount = idShardCount;
        b.idShard = idShard;
        b.fifoSendOrderForTests = fifoSendOrderForTests;
        b.unscheduledAtLevelZeroForTests = unscheduledAtLevelZeroForTests;
        b.fifoGrantOrderForTests = fifoGrantOrderForTests;
        return b;
    }

    /** Payload bytes in one full DATA segment. */
    public int segmentPayload() {
        return mtu - ipUdpOverhead - WireFormat.DATA_HEADER;
    }

    /** Largest Homa datagram (without IP and UDP headers). */
    public int maxDatagram() {
        return mtu - ipUdpOverhead;
    }

    /** Unscheduled bytes rounded up to whole segments. */
    public int unscheduledLimit() {
        int seg = segmentPayload();
        long rounded = ((long) unscheduledBytes + seg - 1) / seg * seg;
        return (int) Math.min(rounded, Integer.MAX_VALUE);
    }

    /** A copy of the unscheduled cutoffs (index = priority level). */
    public int[] unscheduledCutoffs() {
        return unscheduledCutoffs.clone();
    }

    int[] cutoffsShared() {
        return unscheduledCutoffs;
    }

    @Override
    public String toString() {
        return "EngineConfig{maxMessageLength=" + maxMessageLength + ", mtu=" + mtu
                + ", unscheduledBytes=" + unscheduledBytes + ", maxIncoming=" + maxIncoming
                + ", maxOvercommit=" + maxOvercommit + ", grantWindow=" + grantWindow
                + ", grantBatchSegments=" + grantBatchSegments
                + ", cutoffs=" + Arrays.toString(unscheduledCutoffs) + ", linkMbps=" + linkMbps
                + ", tickNanos=" + tickNanos + ", timeoutTicks=" + timeoutTicks + ", needAckTicks=" + needAckTicks
                + ", ackDelayTicks=" + ackDelayTicks + ", timerTrafficPercent=" + timerTrafficPercent
                + ", maxNicQueueNanos=" + maxNicQueueNanos + ", pacerLateCreditNanos=" + pacerLateCreditNanos
                + ", maxBufferedBytes=" + maxBufferedBytes + ", maxBufferedBytesPerPeer=" + maxBufferedBytesPerPeer
                + ", maxOutgoingBytes=" + maxOutgoingBytes + ", maxServerRpcsPerPeer=" + maxServerRpcsPerPeer
                + ", maxRpcs=" + maxRpcs + "}";
    }

    /** Builder of {@link EngineConfig}; {@link #build()} validates every value. */
    public static final class Builder {
        private int maxMessageLength = 64 << 20;
        private int mtu = 1500;
        private int ipUdpOverhead = WireFormat.IPV4_UDP_OVERHEAD;
        private int unscheduledBytes = 40_000;
        private int maxIncoming = 400_000;
        private int maxOvercommit = 8;
        private int grantWindow = 0;
        private int grantFifoFraction = 50;
        private int fifoGrantIncrement = 50_000;
        private int grantBatchSegments = 8;
        private int[] unscheduledCutoffs = {0, 0, 0, 0, 1_000_000, 15_000, 2_800, 200};
        private int maxScheduledPriority = 3;
        private int defaultUnscheduledPriority = 6;
        private long linkMbps = 25_000;
        private long maxNicQueueNanos = 5_000;
        private int throttleMinBytes = 1_000;
        private long pacerLateCreditNanos = 500_000;
        private boolean pacerEnabled = true;
        private int maxGsoSegments = 64;
        private boolean sendPayloadByReference;
        private long tickNanos = 1_000_000;
        private int resendTicks = 5;
        private int resendIntervalTicks = 5;
        private int timeoutTicks = 100;
        private int needAckTicks = 4;
        private int ackDelayTicks = 2;
        private int timerTrafficPercent = 5;
        private int tombstoneTicks = 20;
        private long cutoffsIntervalNanos = 1_000_000;
        private int maxRestarts = 10;
        private int maxServerRpcsPerPeer = 10_000;
        private int maxRpcs = 1_000_000;
        private long maxBufferedBytes = 1L << 30;
        private long maxBufferedBytesPerPeer = 256L << 20;
        private long maxOutgoingBytes = 1L << 30;
        private int idShardCount = 1;
        private int idShard = 0;
        private boolean fifoSendOrderForTests = false;
        private boolean unscheduledAtLevelZeroForTests = false;
        private boolean fifoGrantOrderForTests = false;

        private Builder() {
        }

        public Builder maxMessageLength(int v) { this.maxMessageLength = v; return this; }
        public Builder mtu(int v) { this.mtu = v; return this; }
        public Builder ipUdpOverhead(int v) { this.ipUdpOverhead = v; return this; }
        public Builder unscheduledBytes(int v) { this.unscheduledBytes = v; return this; }
        public Builder maxIncoming(int v) { this.maxIncoming = v; return this; }
        public Builder maxOvercommit(int v) { this.maxOvercommit = v; return this; }
        public Builder grantWindow(int v) { this.grantWindow = v; return this; }
        public Builder grantFifoFraction(int v) { this.grantFifoFraction = v; return this; }
        public Builder fifoGrantIncrement(int v) { this.fifoGrantIncrement = v; return this; }
        public Builder grantBatchSegments(int v) { this.grantBatchSegments = v; return this; }
        /** Index = priority level (0..7), value = largest message length sent at that level. */
        public Builder unscheduledCutoffs(int... v) { this.unscheduledCutoffs = v == null ? null : v.clone(); return this; }
        public Builder maxScheduledPriority(int v) { this.maxScheduledPriority = v; return this; }
        public Builder defaultUnscheduledPriority(int v) { this.defaultUnscheduledPriority = v; return this; }
        public Builder linkMbps(long v) { this.linkMbps = v; return this; }
        public Builder maxNicQueueNanos(long v) { this.maxNicQueueNanos = v; return this; }
        public Builder throttleMinBytes(int v) { this.throttleMinBytes = v; return this; }
        public Builder pacerLateCreditNanos(long v) { this.pacerLateCreditNanos = v; return this; }
        public Builder pacerEnabled(boolean v) { this.pacerEnabled = v; return this; }
        public Builder maxGsoSegments(int v) { this.maxGsoSegments = v; return this; }
        public Builder sendPayloadByReference(boolean v) { this.sendPayloadByReference = v; return this; }
        public Builder tickNanos(long v) { this.tickNanos = v; return this; }
        public Builder resendTicks(int v) { this.resendTicks = v; return this; }
        public Builder resendIntervalTicks(int v) { this.resendIntervalTicks = v; return this; }
        public Builder timeoutTicks(int v) { this.timeoutTicks = v; return this; }
        public Builder needAckTicks(int v) { this.needAckTicks = v; return this; }
        public Builder ackDelayTicks(int v) { this.ackDelayTicks = v; return this; }
        public Builder timerTrafficPercent(int v) { this.timerTrafficPercent = v; return this; }
        public Builder tombstoneTicks(int v) { this.tombstoneTicks = v; return this; }
        public Builder cutoffsIntervalNanos(long v) { this.cutoffsIntervalNanos = v; return this; }
        public Builder maxRestarts(int v) { this.maxRestarts = v; return this; }
        public Builder maxServerRpcsPerPeer(int v) { this.maxServerRpcsPerPeer = v; return this; }
        public Builder maxRpcs(int v) { this.maxRpcs = v; return this; }
        public Builder maxBufferedBytes(long v) { this.maxBufferedBytes = v; return this; }
        public Builder maxBufferedBytesPerPeer(long v) { this.maxBufferedBytesPerPeer = v; return this; }
        public Builder maxOutgoingBytes(long v) { this.maxOutgoingBytes = v; return this; }
        /** This engine is number {@code shard} of {@code count} sharing one id space (count a power of 2). */
        public Builder idShard(int shard, int count) { this.idShard = shard; this.idShardCount = count; return this; }
        public Builder fifoSendOrderForTests(boolean v) { this.fifoSendOrderForTests = v; return this; }
        public Builder unscheduledAtLevelZeroForTests(boolean v) { this.unscheduledAtLevelZeroForTests = v; return this; }
        public Builder fifoGrantOrderForTests(boolean v) { this.fifoGrantOrderForTests = v; return this; }
        /** Test-only: the baseline SRPT is measured against (FIFO sends, no pacer, no priorities). */
        public Builder fifoBaselineForTests() {
            return fifoSendOrderForTests(true).pacerEnabled(false).unscheduledAtLevelZeroForTests(true);
        }

        /**
         * Validates and builds.
         *
         * @throws IllegalArgumentException naming the first value out of range
         */
        public EngineConfig build() {
            check(maxMessageLength >= 1 && maxMessageLength <= Integer.MAX_VALUE - 65_536,
                    "maxMessageLength must be 1..2^31-65537, was " + maxMessageLength);
            check(ipUdpOverhead >= 0 && ipUdpOverhead <= 128, "ipUdpOverhead must be 0..128, was " + ipUdpOverhead);
            check(mtu - ipUdpOverhead >= WireFormat.DATA_HEADER + 64 && mtu - ipUdpOverhead <= 65_507,
                    "mtu minus ipUdpOverhead must be " + (WireFormat.DATA_HEADER + 64)
                            + "..65,507 (the UDP limit), was " + (mtu - ipUdpOverhead));
            check(unscheduledBytes >= 1, "unscheduledBytes must be >= 1, was " + unscheduledBytes);
            check(maxIncoming >= mtu, "maxIncoming must be at least one mtu (" + mtu + "), was " + maxIncoming);
            check(maxOvercommit >= 1 && maxOvercommit <= 64, "maxOvercommit must be 1..64, was " + maxOvercommit);
            check(grantWindow >= 0, "grantWindow must be >= 0 (0 = dynamic), was " + grantWindow);
            check(grantFifoFraction >= 0 && grantFifoFraction <= 500,
                    "grantFifoFraction must be 0..500 thousandths, was " + grantFifoFraction);
            check(fifoGrantIncrement >= 1, "fifoGrantIncrement must be >= 1, was " + fifoGrantIncrement);
            check(grantBatchSegments >= 1 && grantBatchSegments <= 1_000,
                    "grantBatchSegments must be 1..1000, was " + grantBatchSegments);
            check(unscheduledCutoffs != null, "unscheduledCutoffs must not be null");
            check(unscheduledCutoffs.length == WireFormat.PRIORITY_LEVELS,
                    "unscheduledCutoffs must have 8 entries, had " + unscheduledCutoffs.length);
            for (int c : unscheduledCutoffs) {
                check(c >= 0, "unscheduledCutoffs must be >= 0: " + Arrays.toString(unscheduledCutoffs));
            }
            check(maxScheduledPriority >= 0 && maxScheduledPriority < WireFormat.MAX_PRIORITY,
                    "maxScheduledPriority must be 0..6, was " + maxScheduledPriority);
            check(defaultUnscheduledPriority > maxScheduledPriority && defaultUnscheduledPriority <= 7,
                    "defaultUnscheduledPriority must be above maxScheduledPriority and <= 7, was "
                            + defaultUnscheduledPriority);
            check(linkMbps >= 1, "linkMbps must be >= 1, was " + linkMbps);
            check(maxNicQueueNanos >= 0, "maxNicQueueNanos must be >= 0, was " + maxNicQueueNanos);
            check(throttleMinBytes >= 0, "throttleMinBytes must be >= 0, was " + throttleMinBytes);
            check(pacerLateCreditNanos >= 0 && pacerLateCreditNanos <= 1_000_000_000L,
                    "pacerLateCreditNanos must be 0..1,000,000,000 (1 s), was " + pacerLateCreditNanos);
            check(maxGsoSegments >= 1 && maxGsoSegments <= 64, "maxGsoSegments must be 1..64, was " + maxGsoSegments);
            check(tickNanos >= 1_000, "tickNanos must be >= 1000, was " + tickNanos);
            check(resendTicks >= 1, "resendTicks must be >= 1, was " + resendTicks);
            check(resendIntervalTicks >= 1, "resendIntervalTicks must be >= 1, was " + resendIntervalTicks);
            check(timeoutTicks > resendTicks, "timeoutTicks must exceed resendTicks, was " + timeoutTicks);
            check(needAckTicks >= 1, "needAckTicks must be >= 1, was " + needAckTicks);
            check(ackDelayTicks >= 0, "ackDelayTicks must be >= 0, was " + ackDelayTicks);
            check(timerTrafficPercent >= 1 && timerTrafficPercent <= 100,
                    "timerTrafficPercent must be 1..100, was " + timerTrafficPercent);
            check(tombstoneTicks >= 0, "tombstoneTicks must be >= 0, was " + tombstoneTicks);
            check(cutoffsIntervalNanos >= 0, "cutoffsIntervalNanos must be >= 0, was " + cutoffsIntervalNanos);
            check(maxRestarts >= 0, "maxRestarts must be >= 0, was " + maxRestarts);
            check(maxServerRpcsPerPeer >= 1, "maxServerRpcsPerPeer must be >= 1, was " + maxServerRpcsPerPeer);
            check(maxRpcs >= 1, "maxRpcs must be >= 1, was " + maxRpcs);
            check(maxBufferedBytes >= mtu, "maxBufferedBytes must be at least one mtu, was " + maxBufferedBytes);
            check(maxBufferedBytesPerPeer >= mtu,
                    "maxBufferedBytesPerPeer must be at least one mtu, was " + maxBufferedBytesPerPeer);
            check(maxOutgoingBytes >= 1, "maxOutgoingBytes must be >= 1, was " + maxOutgoingBytes);
            check(idShardCount >= 1 && idShardCount <= 1024 && Integer.bitCount(idShardCount) == 1,
                    "idShardCount must be a power of two in 1..1024, was " + idShardCount);
            check(idShard >= 0 && idShard < idShardCount, "idShard must be 0.." + (idShardCount - 1) + ", was " + idShard);
            return new EngineConfig(this);
        }

        private static void check(boolean ok, String message) {
            if (!ok) {
                throw new IllegalArgumentException(message);
            }
        }
    }
}
