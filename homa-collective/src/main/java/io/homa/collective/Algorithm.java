package io.homa.collective;

/** Which schedule an all-reduce uses (see docs/collectives.md). */
public enum Algorithm {
    /**
     * Recursive halving-doubling when the group's size is a power of two and the data is at most
     * {@link CollectiveOptions#halvingDoublingMaxBytes()}; the ring otherwise.
     */
    AUTO,
    /**
     * Ring reduce-scatter then ring all-gather: 2(n-1) steps, each rank sends 2(n-1)/n of the data
     * (bandwidth-optimal; latency grows with n).
     */
    RING,
    /**
     * Recursive halving (reduce-scatter) then recursive doubling (all-gather): 2 log2(n) steps, the
     * same bytes as the ring. Needs a power-of-two group; others fall back to the ring.
     */
    HALVING_DOUBLING
}
