package io.homa.internal;

import io.homa.HomaConfig;
import io.homa.core.sim.FaultModel;

/**
 * How package {@code io.homa.testing} reaches settings that {@code io.homa} keeps out of its public
 * API (the JDK's "shared secrets" pattern): {@link HomaConfig} registers the hook when its class is
 * initialised, and the testing package calls it. Not an API: this package is not exported by the
 * module {@code io.homa} (module-info.java), and on the class path nothing but io.homa.testing has
 * a reason to use it.
 */
public final class ShellAccess {
    /** Turns the fault injector of a configuration on. */
    @FunctionalInterface
    public interface FaultInjectionHook {
        void set(HomaConfig.Builder builder, long seed, FaultModel data, FaultModel control);
    }

    private static volatile FaultInjectionHook faultInjection;

    private ShellAccess() {
    }

    /** Called once, by {@link HomaConfig}'s class initialiser. */
    public static void setFaultInjection(FaultInjectionHook hook) {
        if (faultInjection != null) {
            throw new IllegalStateException("the fault injection hook is set already");
        }
        faultInjection = hook;
    }

    /**
     * The hook set by {@link HomaConfig}. Always set by the time a caller holds a
     * {@link HomaConfig.Builder}: builders come only from HomaConfig's own methods, which run its
     * class initialiser first.
     */
    public static FaultInjectionHook faultInjection() {
        return faultInjection;
    }
}
