package io.homa.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * An echo server of one transport and the clients connected to it, closed together. The first
 * client is opened with the server; {@link #newClient()} adds more (separate connections or
 * sockets, each with its own I/O thread).
 */
public final class EchoPair implements AutoCloseable {
    private final Transport transport;
    private final EchoServer server;
    private final EchoClient client;
    private final List<EchoClient> others = new ArrayList<>();

    private EchoPair(Transport transport, EchoServer server, EchoClient client) {
        this.transport = transport;
        this.server = server;
        this.client = client;
    }

    /** Starts a server of {@code transportName} and one client of it. */
    public static EchoPair open(String transportName) {
        return open(Transports.create(transportName));
    }

    public static EchoPair open(Transport transport) {
        EchoServer server = transport.startServer();
        try {
            return new EchoPair(transport, server, transport.connect(server.address()));
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
    }

    public Transport transport() {
        return transport;
    }

    public EchoServer server() {
        return server;
    }

    /** The first client. */
    public EchoClient client() {
        return client;
    }

    /** Opens another client of the same server, closed with the pair. */
    public synchronized EchoClient newClient() {
        EchoClient c = transport.connect(server.address());
        others.add(c);
        return c;
    }

    /** Closes the clients, then the server. */
    @Override
    public void close() {
        List<EchoClient> all;
        synchronized (this) {
            all = new ArrayList<>(others);
            others.clear();
        }
        RuntimeException failure = null;
        all.add(0, client);
        for (EchoClient c : all) {
            try {
                c.close();
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        server.close();
        if (failure != null) {
            throw failure;
        }
    }
}
