package io.homa.bench.load;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SizeDistributionTest {
    @Test
    void w4_bucketsAreDecilesByCount_andTruncationCaps() {
        SizeDistribution w4 = SizeDistribution.parse("w4", 0);
        for (int k = 1; k < 10; k++) {
            assertTrue(w4.bucketMax(k) >= w4.bucketMax(k - 1));
            assertTrue(w4.bucketCdf(k) >= w4.bucketCdf(k - 1));
        }
        assertEquals(1.0, w4.bucketCdf(9), 1e-9);
        assertEquals(0, w4.bucket(w4.smallest()));
        SizeDistribution capped = SizeDistribution.parse("w4", 1000);
        SplittableRandom r = new SplittableRandom(1);
        for (int i = 0; i < 10_000; i++) {
            assertTrue(capped.sample(r) <= 1000);
        }
        assertEquals(100.0, SizeDistribution.parse("fixed:100", 0).mean(), 1e-9);
    }

    @Test
    void ideal_isBaseRttPlusSerialisation() {
        // 125,000 B at 1 Gbit/s: 1 ms on the wire.
        assertEquals(1100.0, LoadRecorder.idealUs(100, 1, 125_000), 1e-9);
    }
}
