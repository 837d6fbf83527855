package io.homa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Proves that {@link LeakCheck} sees a leak: leaks one buffer on purpose, then forgives it. */
class LeakDetectorSelfTest {
    @Test
    void aLeakedBufferIsReported() throws InterruptedException {
        List<String> leaks;
        LeakRecordingDetector.quiet = true;
        try {
            leakOne();
            leaks = LeakCheck.collect();
        } finally {
            LeakRecordingDetector.clear(); // this leak was on purpose: do not fail the build for it
            LeakRecordingDetector.quiet = false;
        }
        assertFalse(leaks.isEmpty(), "the deliberately leaked buffer was not reported");
        assertTrue(leaks.get(0).contains("LEAK"), leaks.get(0));
    }

    private static void leakOne() {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        b.writeLong(42); // never released
    }
}
