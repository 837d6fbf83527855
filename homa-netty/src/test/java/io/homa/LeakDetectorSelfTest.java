package io.homa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Proves that {@link LeakCheck} sees a leak: leaks one buffer on purpose, then forgives that one
 * leak only. A leak of another test that the collector happens to find during this test (a buffer
 * of an earlier class collected late) is not forgiven: it fails this test, so it still fails the
 * build.
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class LeakDetectorSelfTest {
    @Test
    void aLeakedBufferIsReported() throws InterruptedException {
        List<String> earlier = LeakCheck.collect();
        assertTrue(earlier.isEmpty(), "leaks of earlier tests, found late:\n" + String.join("\n", earlier));
        List<String> ours = new ArrayList<>();
        List<String> others = new ArrayList<>();
        LeakRecordingDetector.quiet = true;
        try {
            leakOne();
            for (String leak : LeakCheck.collect()) {
                (leak.contains("LeakDetectorSelfTest.leakOne") ? ours : others).add(leak);
            }
        } finally {
            LeakRecordingDetector.clear(); // the deliberate leak must not fail the build ...
            LeakRecordingDetector.quiet = false;
        }
        assertTrue(others.isEmpty(), "leaks of other tests, found late:\n" + String.join("\n", others)); // ... others must
        assertFalse(ours.isEmpty(), "the deliberately leaked buffer was not reported");
        assertTrue(ours.get(0).contains("LEAK"), ours.get(0));
    }

    private static void leakOne() {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        b.writeLong(42); // never released
    }
}
