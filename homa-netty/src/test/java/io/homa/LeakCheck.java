package io.homa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Fails a test after which Netty's leak detector reports a leaked buffer. Every test class of this
 * module names it ({@code @ExtendWith(LeakCheck.class)}, which {@code LeakCheckWiredTest} checks):
 * the tests run inside module {@code io.homa} (surefire patches them into it), and JUnit's
 * extension auto-detection, a {@code ServiceLoader}, ignores a provider in a named module that
 * only {@code META-INF/services} declares, so the services file here serves the class-path users
 * of the test jar (homa-bench) alone. After each test it runs the
 * garbage collector, waits until a sentinel weak reference has been cleared and enqueued (so the
 * collector's reference processing has run), then allocates a buffer, which makes the detector
 * look at the references it tracks and report the leaked ones.
 */
public final class LeakCheck implements BeforeAllCallback, AfterEachCallback {
    /** The test classes this check ran for (what {@code LeakCheckWiredTest} looks at). */
    static final java.util.Set<Class<?>> CHECKED = java.util.concurrent.ConcurrentHashMap.newKeySet();

    @Override
    public void beforeAll(ExtensionContext context) {
        context.getTestClass().ifPresent(CHECKED::add);
        assertEquals(ResourceLeakDetector.Level.PARANOID, ResourceLeakDetector.getLevel(),
                "tests must run with -Dio.netty.leakDetection.level=PARANOID");
        PooledByteBufAllocator.DEFAULT.directBuffer(1).release(); // loads the ByteBuf detector
        assertTrue(LeakRecordingDetector.installed(),
                "tests must run with -Dio.netty.customResourceLeakDetector=io.homa.LeakRecordingDetector");
    }

    @Override
    public void afterEach(ExtensionContext context) throws InterruptedException {
        List<String> leaks = collect();
        if (!leaks.isEmpty()) {
            LeakRecordingDetector.clear();
            fail(leaks.size() + " ByteBuf leak(s) reported after " + context.getDisplayName() + ":\n"
                    + String.join("\n", leaks));
        }
    }

    /** Runs the collector and returns the leaks the detector reports afterwards. */
    static List<String> collect() throws InterruptedException {
        for (int round = 0; round < 2; round++) {
            ReferenceQueue<Object> queue = new ReferenceQueue<>();
            WeakReference<Object> sentinel = new WeakReference<>(new Object(), queue);
            long giveUp = System.nanoTime() + 10_000_000_000L;
            while (true) {
                System.gc();
                if (queue.remove(100) != null) {
                    break;
                }
                if (System.nanoTime() > giveUp) {
                    fail("the garbage collector never cleared a weak reference");
                }
            }
            if (sentinel.get() != null) {
                fail("sentinel survived");
            }
            for (int i = 0; i < 4; i++) {
                ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(1);
                b.release();
                ByteBuf h = PooledByteBufAllocator.DEFAULT.heapBuffer(1);
                h.release();
            }
        }
        return LeakRecordingDetector.leaks();
    }
}
