package io.homa;

import io.netty.util.ResourceLeakDetector;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A Netty leak detector that, besides logging like the default one, records every leak it sees so
 * that {@link LeakCheck} can fail the test. Installed for the whole test JVM with
 * {@code -Dio.netty.customResourceLeakDetector=io.homa.LeakRecordingDetector} (see the pom); the
 * level is PARANOID there, so every buffer is tracked.
 */
public final class LeakRecordingDetector<T> extends ResourceLeakDetector<T> {
    /** Every leak report so far (type and access records), until {@link #clear()}. */
    private static final List<String> LEAKS = new CopyOnWriteArrayList<>();
    private static volatile boolean installed;
    /** Set by the self-test while it leaks on purpose, so that the log shows no false alarm. */
    static volatile boolean quiet;

    /** The constructor Netty's factory looks for first (deprecated there, but still used). */
    @SuppressWarnings("deprecation")
    public LeakRecordingDetector(Class<?> resourceType, int samplingInterval, long maxActive) {
        super(resourceType, samplingInterval, maxActive);
        installed = true;
    }

    public LeakRecordingDetector(Class<?> resourceType, int samplingInterval) {
        super(resourceType, samplingInterval);
        installed = true;
    }

    @Override
    protected boolean needReport() {
        return true;
    }

    @Override
    protected void reportTracedLeak(String resourceType, String records) {
        LEAKS.add("LEAK: " + resourceType + " was not released before it was garbage-collected." + records);
        if (!quiet) {
            super.reportTracedLeak(resourceType, records);
        }
    }

    @Override
    protected void reportUntracedLeak(String resourceType) {
        LEAKS.add("LEAK: " + resourceType + " was not released before it was garbage-collected (no records).");
        if (!quiet) {
            super.reportUntracedLeak(resourceType);
        }
    }

    static List<String> leaks() {
        return List.copyOf(LEAKS);
    }

    static void clear() {
        LEAKS.clear();
    }

    /** Whether Netty picked this detector up (the system property was set in time). */
    static boolean installed() {
        return installed;
    }
}
