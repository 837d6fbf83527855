package io.homa.bench;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Makes a leaked Netty buffer a failed test: every leak the detector reports (the build runs it at
 * PARANOID) is recorded, and after the test class the extension collects garbage and fails if any
 * was found. Registered on every test class that moves bytes through Netty, so that whichever runs
 * first installs the recording detectors before Netty creates its own.
 */
public final class LeakCheck implements AfterAllCallback {
    private static final List<String> LEAKS = new CopyOnWriteArrayList<>();

    static {
        ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new ResourceLeakDetectorFactory() {
            @Override
            public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval, long maxActive) {
                return new ResourceLeakDetector<>(resource, samplingInterval) {
                    @Override
                    protected void reportTracedLeak(String resourceType, String records) {
                        LEAKS.add(resourceType + records);
                        super.reportTracedLeak(resourceType, records);
                    }

                    @Override
                    protected void reportUntracedLeak(String resourceType) {
                        LEAKS.add(resourceType);
                        super.reportUntracedLeak(resourceType);
                    }
                };
            }
        });
    }

    @Override
    public void afterAll(ExtensionContext context) throws InterruptedException {
        for (int round = 0; round < 3; round++) {
            ReferenceQueue<Object> queue = new ReferenceQueue<>();
            WeakReference<Object> sentinel = new WeakReference<>(new Object(), queue);
            System.gc();
            queue.remove(2000); // this cycle's references have been processed
            sentinel.clear();
            // Leaks are reported when the next buffer is tracked.
            for (ByteBufAllocator a : List.of(ByteBufAllocator.DEFAULT, PooledByteBufAllocator.DEFAULT,
                    UnpooledByteBufAllocator.DEFAULT)) {
                a.directBuffer(8).release();
                a.heapBuffer(8).release();
            }
        }
        assertTrue(LEAKS.isEmpty(), () -> "Netty buffers leaked:\n" + String.join("\n", LEAKS));
    }
}
