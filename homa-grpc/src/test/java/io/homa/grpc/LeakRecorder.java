package io.homa.grpc;

import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Netty's PARANOID leak detector, recording what it reports so that {@link Check} fails the test
 * (installed by the pom with {@code -Dio.netty.customResourceLeakDetector}). The same mechanism
 * as homa-netty's LeakCheck, which is not published as a test-jar for other modules to use.
 */
public final class LeakRecorder<T> extends ResourceLeakDetector<T> {
    private static final List<String> LEAKS = new CopyOnWriteArrayList<>();
    private static volatile boolean installed;

    @SuppressWarnings("deprecation")
    public LeakRecorder(Class<?> resourceType, int samplingInterval, long maxActive) {
        super(resourceType, samplingInterval, maxActive);
        installed = true;
    }

    public LeakRecorder(Class<?> resourceType, int samplingInterval) {
        super(resourceType, samplingInterval);
        installed = true;
    }

    @Override
    protected boolean needReport() {
        return true;
    }

    @Override
    protected void reportTracedLeak(String resourceType, String records) {
        LEAKS.add("LEAK: " + resourceType + records);
        super.reportTracedLeak(resourceType, records);
    }

    @Override
    protected void reportUntracedLeak(String resourceType) {
        LEAKS.add("LEAK: " + resourceType + " (no records)");
        super.reportUntracedLeak(resourceType);
    }

    /** Registered for every test class (src/test/resources): fails a test after which a leak was reported. */
    public static final class Check implements BeforeAllCallback, AfterEachCallback {
        @Override
        public void beforeAll(ExtensionContext context) {
            assertEquals(ResourceLeakDetector.Level.PARANOID, ResourceLeakDetector.getLevel(),
                    "tests must run with -Dio.netty.leakDetection.level=PARANOID");
            PooledByteBufAllocator.DEFAULT.directBuffer(1).release(); // loads the detector
            assertTrue(installed, "tests must run with -Dio.netty.customResourceLeakDetector=io.homa.grpc.LeakRecorder");
        }

        @Override
        public void afterEach(ExtensionContext context) {
            System.gc();
            for (int i = 0; i < 8; i++) { // an allocation makes the detector report what the GC found
                PooledByteBufAllocator.DEFAULT.directBuffer(1).release();
                PooledByteBufAllocator.DEFAULT.heapBuffer(1).release();
            }
            if (!LEAKS.isEmpty()) {
                List<String> leaks = List.copyOf(LEAKS);
                LEAKS.clear();
                fail(leaks.size() + " ByteBuf leak(s) after " + context.getDisplayName() + ":\n" + String.join("\n", leaks));
            }
        }
    }
}
