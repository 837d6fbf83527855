package io.homa.bench;

import java.net.InetSocketAddress;
import java.util.List;

/**
 * A transport whose echo servers run in another JVM ({@code compare --processes 2}), as a user's
 * client and server would: the client stays in this process, the server in a {@link ServerProcess}
 * that lives for the whole comparison (so its code is warm, as a server's would be). The cost of a
 * measured interval is then both processes' together ({@link EchoServer#startCost}).
 */
final class SeparateProcessTransport implements Transport, AutoCloseable {
    private final Transport local;
    private final List<String> prefix;
    private final List<String> jvmArgs;
    private ServerProcess process;

    /** Servers in a JVM on this host, in this network namespace. */
    SeparateProcessTransport(Transport local) {
        this(local, List.of(), List.of());
    }

    /**
     * Servers in a JVM started through {@code prefix} (e.g. {@code ip netns exec NS}) with
     * {@code jvmArgs} (e.g. the host to bind).
     */
    SeparateProcessTransport(Transport local, List<String> prefix, List<String> jvmArgs) {
        this.local = local;
        this.prefix = List.copyOf(prefix);
        this.jvmArgs = List.copyOf(jvmArgs);
    }

    @Override
    public String name() {
        return local.name();
    }

    @Override
    public int maxMessageLength() {
        return local.maxMessageLength();
    }

    @Override
    public boolean throughputOnly() {
        return local.throughputOnly();
    }

    @Override
    public boolean unloadedOnly() {
        return local.unloadedOnly();
    }

    @Override
    public boolean blockingClients() {
        return local.blockingClients();
    }

    @Override
    public String warmUpGroup() {
        return name(); // each server JVM warms up on its own
    }

    @Override
    public boolean supports(int size) {
        return local.supports(size);
    }

    @Override
    public synchronized EchoServer startServer() {
        if (process == null) {
            process = new ServerProcess(local.name(), prefix, jvmArgs);
        }
        String[] ready = process.ask("START", "READY ").trim().split(" ");
        InetSocketAddress address = new InetSocketAddress(ready[1], Integer.parseInt(ready[2]));
        ServerProcess p = process;
        return new EchoServer() {
            @Override
            public InetSocketAddress address() {
                return address;
            }

            @Override
            public Cost startCost() {
                p.ask("BEGIN", "OK");
                return p::endCost;
            }

            private boolean closed;

            @Override
            public void close() {
                if (!closed) {
                    closed = true;
                    p.ask("STOP", "STOPPED");
                }
            }
        };
    }

    @Override
    public EchoClient connect(InetSocketAddress server) {
        return local.connect(server);
    }

    /** Ends the server JVM. */
    @Override
    public synchronized void close() {
        if (process != null) {
            process.close();
            process = null;
        }
    }

    @Override
    public String toString() {
        return name() + " (server in another JVM)";
    }
}
