package io.homa.grpc;

import io.grpc.Attributes;
import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.Status;
import io.grpc.StatusOr;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.Executor;

/**
 * Resolves {@code homa://host:port} targets: the host's addresses (by the JVM's resolver, DNS or
 * the hosts file) with the port, as Homa server addresses. Registered with grpc-java through
 * {@code META-INF/services}; applications do not call it. Each resolution runs on the channel's
 * offload executor (when it has one) and reports on the channel's synchronization context.
 */
public final class HomaNameResolverProvider extends NameResolverProvider {
    /** The target scheme: {@code homa://host:port}. */
    public static final String SCHEME = "homa";

    @Override
    protected boolean isAvailable() {
        return true;
    }

    /** Below DNS's 5: the default scheme of targets without one must stay DNS. */
    @Override
    protected int priority() {
        return 4;
    }

    @Override
    public String getDefaultScheme() {
        return SCHEME;
    }

    @Override
    public Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
        return List.of(HomaSocketAddress.class);
    }

    @Override
    public NameResolver newNameResolver(URI target, NameResolver.Args args) {
        if (!SCHEME.equalsIgnoreCase(target.getScheme())) {
            return null;
        }
        String host = target.getHost();
        if (host == null) {
            throw new IllegalArgumentException("a homa target is homa://host:port, was " + target);
        }
        int port = target.getPort() < 0 ? args.getDefaultPort() : target.getPort();
        return new Resolver(host, port, target.getRawAuthority(), args);
    }

    /** Looks the host up once per start or refresh. */
    private static final class Resolver extends NameResolver {
        private final String host;
        private final int port;
        private final String authority;
        private final Args args;
        private Listener2 listener;
        private boolean shutdown;

        Resolver(String host, int port, String authority, Args args) {
            this.host = host;
            this.port = port;
            this.authority = authority;
            this.args = args;
        }

        @Override
        public String getServiceAuthority() {
            return authority;
        }

        @Override
        public void start(Listener2 listener) {
            this.listener = listener;
            resolve();
        }

        @Override
        public void refresh() {
            resolve();
        }

        private void resolve() {
            Executor executor = args.getOffloadExecutor();
            Runnable lookUp = () -> {
                List<EquivalentAddressGroup> groups = new ArrayList<>();
                Status error = null;
                try {
                    for (InetAddress a : InetAddress.getAllByName(host)) {
                        groups.add(new EquivalentAddressGroup(new HomaSocketAddress(new InetSocketAddress(a, port))));
                    }
                } catch (UnknownHostException e) {
                    error = Status.UNAVAILABLE.withDescription("cannot resolve " + host).withCause(e);
                }
                Status failed = error;
                args.getSynchronizationContext().execute(() -> {
                    if (shutdown) {
                        return;
                    }
                    listener.onResult2(ResolutionResult.newBuilder()
                            .setAddressesOrError(failed == null ? StatusOr.fromValue(groups) : StatusOr.fromStatus(failed))
                            .setAttributes(Attributes.EMPTY).build());
                });
            };
            if (executor == null) {
                lookUp.run();
            } else {
                executor.execute(lookUp);
            }
        }

        @Override
        public void shutdown() {
            args.getSynchronizationContext().execute(() -> shutdown = true);
        }
    }
}
