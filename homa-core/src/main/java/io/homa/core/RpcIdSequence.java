package io.homa.core;

import java.util.SplittableRandom;

/**
 * The client ids one engine hands out, in an order an observer cannot extrapolate: the i-th id
 * is a keyed permutation of i, placed in the bits {@link RpcIds} leaves free (bit 0 stays 0,
 * the shard bits name the engine). A permutation of a counter never repeats an id until the
 * counter wraps (2^53 ids at the least, with 1,024 shards), so no id comes back while an RPC
 * or a server's tombstone could still know it; yet seeing some ids tells nothing useful about
 * the next ones without the key.
 *
 * <p>The permutation is a balanced Feistel network with six rounds whose round function mixes
 * the half block with a round key (a keyed 64-bit finaliser); an odd width is handled by cycle
 * walking. It is a cipher-like mix for ids, not a vetted block cipher: the key has the entropy
 * of the engine's seed (64 bits with a secure random seed), which is what the threat model
 * asks (docs/security.md, RPC ids).
 */
final class RpcIdSequence {
    private static final int ROUNDS = 6;

    private final long[] roundKeys = new long[ROUNDS];
    /** Bits of an id the permutation fills: all but bit 0 and the shard bits. */
    private final int bits;
    private final int halfBits;
    private final long halfMask;
    private final long domainMask;
    /** Where the permuted value starts in an id: above bit 0 and the shard bits. */
    private final int shift;
    private final long shardBits;
    private long counter;

    /**
     * @param secret the engine's secret (its seed): the round keys and the counter's start
     * @param shard this engine's shard, 0 .. shardCount-1
     * @param shardCount a power of two
     */
    RpcIdSequence(long secret, int shard, int shardCount) {
        SplittableRandom random = new SplittableRandom(secret);
        for (int i = 0; i < ROUNDS; i++) {
            roundKeys[i] = random.nextLong();
        }
        this.shift = 1 + Integer.numberOfTrailingZeros(shardCount);
        this.bits = Long.SIZE - shift;
        this.halfBits = (bits + 1) / 2;
        this.halfMask = (1L << halfBits) - 1;
        this.domainMask = (1L << bits) - 1;
        this.shardBits = (long) shard << 1;
        this.counter = random.nextLong() & domainMask;
    }

    /** The next client id: even, with this engine's shard bits, never 0. */
    long next() {
        while (true) {
            long value = permute(counter);
            counter = (counter + 1) & domainMask;
            long id = (value << shift) | shardBits;
            if (id != 0) {
                return id;
            }
        }
    }

    /** A bijection of [0, 2^bits): the Feistel network over 2 × halfBits, walked until it lands inside. */
    private long permute(long x) {
        do {
            x = feistel(x);
        } while ((x & ~domainMask) != 0);
        return x;
    }

    private long feistel(long x) {
        long left = (x >>> halfBits) & halfMask;
        long right = x & halfMask;
        for (long key : roundKeys) {
            long mixed = left ^ (mix(right ^ key) & halfMask);
            left = right;
            right = mixed;
        }
        return (left << halfBits) | right;
    }

    /** A 64-bit finaliser (MurmurHash3's fmix64): every input bit reaches every output bit. */
    private static long mix(long z) {
        z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
        z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
        return z ^ (z >>> 33);
    }
}
