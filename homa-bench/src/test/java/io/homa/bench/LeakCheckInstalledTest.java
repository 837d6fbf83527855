package io.homa.bench;

import io.netty.buffer.ByteBuf;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.Extension;

import java.util.ServiceLoader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * This module's tests are leak-checked by homa-netty's {@code io.homa.LeakCheck} (its own
 * self-test, {@code LeakDetectorSelfTest}, proves it catches a leak): this proves it is wired in
 * here, i.e. found and auto-detected by JUnit, and fed by the recording detector at PARANOID.
 */
class LeakCheckInstalledTest {
    @Test
    void homaNettysLeakCheckRunsAfterEveryTestOfThisModule() {
        assertTrue(Boolean.getBoolean("junit.jupiter.extensions.autodetection.enabled"),
                "JUnit's extension auto-detection is off: LeakCheck would not run");
        assertTrue(ServiceLoader.load(Extension.class).stream().anyMatch(p -> p.type().getName().equals("io.homa.LeakCheck")),
                "io.homa.LeakCheck is not registered (homa-netty's test jar missing?)");
        assertEquals(ResourceLeakDetector.Level.PARANOID, ResourceLeakDetector.getLevel());
        ResourceLeakDetector<ByteBuf> d = ResourceLeakDetectorFactory.instance().newResourceLeakDetector(ByteBuf.class);
        assertEquals("io.homa.LeakRecordingDetector", d.getClass().getName());
    }
}
