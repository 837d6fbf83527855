package io.homa.internal;

import io.homa.core.sim.FaultModel;

/**
 * How package {@code io.homa.testing} reaches a setting that {@code io.homa} keeps out of its
 * public API (the JDK's "shared secrets" pattern): {@code HomaConfig} registers the hook when its
 * class is initialised, and the testing package calls it. The hook takes the builder as an
 * {@code Object}, so that this package never names a type of the API above it. Internal use only:
 * this package is not exported by the module {@code io.homa} (module-info.java).
 */
public final class ShellAccess {
    /** Turns the fault injector of a configuration builder on. */
    @FunctionalInterface
    public interface FaultInjectionHook {
        /** {@code builder} is a {@code HomaConfig.Builder}. */
        void set(Object builder, long seed, FaultModel data, FaultModel control);
    }

    private static volatile FaultInjectionHook faultInjection;

    private ShellAccess() {
    }

    /** Called once, by {@code HomaConfig}'s class initialiser. */
    public static void setFaultInjection(FaultInjectionHook hook) {
        if (faultInjection != null) {
            throw new IllegalStateException("the fault injection hook is set already");
        }
        faultInjection = hook;
    }

    /**
     * The hook {@code HomaConfig} set. Always set by the time a caller holds a
     * {@code HomaConfig.Builder}: builders come only from HomaConfig's own methods, which run its
     * class initialiser first.
     */
    public static FaultInjectionHook faultInjection() {
        return faultInjection;
    }
}
