package io.homa.bench;

import java.net.InetSocketAddress;

/**
 * One way of moving RPCs, as compared by the benchmarks: a factory of echo servers and of clients
 * for them. Every server and client it makes binds to {@link NettyIo#HOST} (loopback by default)
 * and has its own I/O thread(s), so that a client and a server in one process behave like two
 * processes on one host.
 */
public interface Transport {
    /** The name used on the command line and in results.json: homa, tcp-single, tcp-pool, udp-raw. */
    String name();

    /** The largest request (and so reply) this transport carries, in bytes. */
    int maxMessageLength();

    /** Starts an echo server on {@link NettyIo#HOST} and an ephemeral port. */
    EchoServer startServer();

    /**
     * Starts an echo server on {@link NettyIo#HOST} and {@code port} (0: an ephemeral port), for
     * processes that find each other by a port agreed in advance (the testbed's rank processes).
     *
     * @throws UnsupportedOperationException if this transport only binds ephemeral ports
     */
    default EchoServer startServer(int port) {
        if (port == 0) {
            return startServer();
        }
        throw new UnsupportedOperationException(name() + " binds ephemeral ports only");
    }

    /** Starts a client of the server at {@code server}. */
    EchoClient connect(InetSocketAddress server);

    /** Whether {@code compare} runs this transport in the throughput scenarios only (a variant about bulk load). */
    default boolean throughputOnly() {
        return false;
    }

    /**
     * Whether {@code compare} runs this transport in the unloaded scenarios only (a floor for one
     * call at a time, such as a spinning ping-pong that carries one call at a time).
     */
    default boolean unloadedOnly() {
        return false;
    }

    /**
     * Whether this transport's clients block the caller for each call ({@link EchoClient#blocking()}):
     * {@code compare} leaves them out of scenarios whose calls must start together (an incast).
     */
    default boolean blockingClients() {
        return false;
    }

    /**
     * Transports of one group run the same code, so {@code compare}'s JIT warm-up of the first
     * serves them all (homa and homa-2loops); by default each transport is its own group.
     */
    default String warmUpGroup() {
        return name();
    }

    /** Whether a request of {@code size} bytes fits this transport. */
    default boolean supports(int size) {
        return size >= 0 && size <= maxMessageLength();
    }
}
