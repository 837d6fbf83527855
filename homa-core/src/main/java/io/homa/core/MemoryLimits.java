package io.homa.core;

import java.util.function.Consumer;

/**
 * The memory an engine holds and its limits: incoming messages being reassembled (their chunks
 * and bookkeeping, see {@link IncomingMessage#footprint()}), per engine ({@code maxBufferedBytes})
 * and per peer ({@code maxBufferedBytesPerPeer}), and the outgoing payloads it reads
 * ({@code maxOutgoingBytes}). Over an incoming limit, the memory goes to the better-ranked
 * message (SRPT): a partly received message that ranks worse is evicted, so that partial messages
 * can never hold all the memory while each waits for more (a deadlock with no timeout, as the
 * peer stays alive).
 */
final class MemoryLimits {
    private final EngineConfig cfg;
    private final EngineCounters counters;
    /** Memory charged for incomplete incoming messages (chunks plus bookkeeping). */
    private long bufferedBytes;
    private long bufferedBytesHighWater;
    private long peerBufferedBytesHighWater;
    /** Bytes of outgoing payloads the engine holds (from startRequest/respond until released). */
    private long outgoingBytes;
    private long outgoingBytesHighWater;

    MemoryLimits(EngineConfig cfg, EngineCounters counters) {
        this.cfg = cfg;
        this.counters = counters;
    }

    // ------------------------------------------------------------------ incoming

    /** Charges (or, negative, releases) incoming-message memory to the engine and to the peer. */
    void charge(Peer peer, long bytes) {
        bufferedBytes += bytes;
        peer.bufferedBytes += bytes;
        if (bytes > 0) {
            if (bufferedBytes > bufferedBytesHighWater) {
                bufferedBytesHighWater = bufferedBytes;
            }
            if (peer.bufferedBytes > peerBufferedBytesHighWater) {
                peerBufferedBytesHighWater = peer.bufferedBytes;
            }
        }
    }

    /** Whether {@code need} more bytes would take the engine beyond {@code maxBufferedBytes}. */
    boolean overEngineLimit(long need) {
        return bufferedBytes + need > cfg.maxBufferedBytes;
    }

    /** Whether {@code need} more bytes would take {@code peer} beyond {@code maxBufferedBytesPerPeer}. */
    boolean overPeerLimit(Peer peer, long need) {
        return peer.bufferedBytes + need > cfg.maxBufferedBytesPerPeer;
    }

    /**
     * The worst-ranked request being received from {@code candidates}, if it ranks below a message
     * with {@code remaining} bytes to go and arrival {@code seq} (fewer bytes left ranks better,
     * then the older); else null: nothing may be evicted for the newcomer, which waits (its sender
     * retries). {@code self}, the newcomer's own message if it has one, is never chosen.
     */
    IncomingMessage evictable(Iterable<Peer> candidates, long remaining, long seq, IncomingMessage self) {
        Worst worst = new Worst(self);
        for (Peer p : candidates) {
            p.serverRpcs.forEachValue(worst);
        }
        IncomingMessage w = worst.found;
        if (w == null || w.remaining() < remaining || (w.remaining() == remaining && w.seq < seq)) {
            return null;
        }
        return w;
    }

    /** One search's worst-ranked evictable message so far. */
    private static final class Worst implements Consumer<Rpc> {
        private final IncomingMessage self;
        IncomingMessage found;

        Worst(IncomingMessage self) {
            this.self = self;
        }

        @Override
        public void accept(Rpc r) {
            IncomingMessage m = r.in;
            if (m == null || m == self || r.state != Rpc.State.SERVER_RECEIVING || m.footprint() == 0) {
                return;
            }
            if (found == null || m.remaining() > found.remaining()
                    || (m.remaining() == found.remaining() && m.seq > found.seq)) {
                found = m;
            }
        }
    }

    long bufferedBytes() {
        return bufferedBytes;
    }

    long bufferedBytesHighWater() {
        return bufferedBytesHighWater;
    }

    long peerBufferedBytesHighWater() {
        return peerBufferedBytesHighWater;
    }

    // ------------------------------------------------------------------ outgoing

    /** Refuses a message that could never be queued, whatever else is released. */
    void checkOutgoingLength(String what, int length) {
        if (length > cfg.maxOutgoingBytes) {
            throw new IllegalArgumentException(what + " of " + length + " bytes exceeds maxOutgoingBytes "
                    + cfg.maxOutgoingBytes + ": it could never be queued");
        }
    }

    /** Refuses (and counts) a message that does not fit beside the outgoing bytes held now. */
    void checkOutgoingRoom(String what, int length) {
        if (outgoingBytes + length > cfg.maxOutgoingBytes) {
            counters.bump(Counter.OUTGOING_LIMIT_REFUSALS);
            throw new EngineLimitException("maxOutgoingBytes", what + " of " + length
                    + " bytes refused: the engine holds " + outgoingBytes + " bytes of outgoing messages"
                    + " and maxOutgoingBytes=" + cfg.maxOutgoingBytes);
        }
    }

    void addOutgoing(int length) {
        outgoingBytes += length;
        if (outgoingBytes > outgoingBytesHighWater) {
            outgoingBytesHighWater = outgoingBytes;
        }
    }

    void releaseOutgoing(int length) {
        outgoingBytes -= length;
    }

    long outgoingBytes() {
        return outgoingBytes;
    }

    long outgoingBytesHighWater() {
        return outgoingBytesHighWater;
    }
}
