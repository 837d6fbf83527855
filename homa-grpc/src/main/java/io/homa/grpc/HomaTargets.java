package io.homa.grpc;

/** The {@code homa://host:port} target form: grpc-java resolves the host by DNS, Homa does the rest. */
final class HomaTargets {
    static final String SCHEME = "homa";
    private static final String PREFIX = SCHEME + "://";

    private HomaTargets() {
    }

    static boolean isHomaTarget(String target) {
        return target.regionMatches(true, 0, PREFIX, 0, PREFIX.length());
    }

    /** {@code homa://host:port} becomes {@code dns:///host:port}; other targets stay as they are. */
    static String toGrpcTarget(String target) {
        if (!isHomaTarget(target)) {
            return target;
        }
        String authority = target.substring(PREFIX.length());
        while (authority.endsWith("/")) {
            authority = authority.substring(0, authority.length() - 1);
        }
        return "dns:///" + authority;
    }
}
