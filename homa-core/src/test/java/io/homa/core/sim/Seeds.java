package io.homa.core.sim;

import java.util.function.LongConsumer;

/**
 * Seeded test runs: the seed comes from {@code -Dhoma.sim.seed} when given (to replay a failure),
 * else from the test; a failure is rethrown with the seed in its message.
 */
public final class Seeds {
    private Seeds() {
    }

    /** The seed to use: the replay property if set, else {@code defaultSeed}. */
    public static long seed(long defaultSeed) {
        String s = System.getProperty("homa.sim.seed");
        return s == null || s.isBlank() ? defaultSeed : Long.parseLong(s.trim());
    }

    /** Runs {@code body} with {@link #seed}; a failure names the seed and how to replay it. */
    public static void run(long defaultSeed, LongConsumer body) {
        long seed = seed(defaultSeed);
        try {
            body.accept(seed);
        } catch (AssertionError | RuntimeException e) {
            AssertionError wrapped = new AssertionError("failing seed " + seed
                    + " (replay with -Dhoma.sim.seed=" + seed + "): " + e.getMessage(), e);
            throw wrapped;
        }
    }
}
