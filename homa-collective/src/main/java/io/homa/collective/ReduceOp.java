package io.homa.collective;

/** How {@link CollectiveGroup#allReduce} and {@link CollectiveGroup#reduceScatter} combine the ranks' elements. */
public enum ReduceOp {
    SUM,
    MIN,
    MAX
}
