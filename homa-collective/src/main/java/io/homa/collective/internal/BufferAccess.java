package io.homa.collective.internal;

import io.homa.collective.CollectiveBuffer;

import java.util.function.Function;

/** Lets the implementation reach a {@link CollectiveBuffer}'s vector without making it API. */
public final class BufferAccess {
    private static volatile Function<CollectiveBuffer, Vector> access;

    private BufferAccess() {
    }

    /** Called once, by {@link CollectiveBuffer}'s class initializer. */
    public static void install(Function<CollectiveBuffer, Vector> f) {
        access = f;
    }

    static Vector vectorOf(CollectiveBuffer b) {
        return access.apply(b); // b exists, so its class (which installs the function) is initialized
    }
}
