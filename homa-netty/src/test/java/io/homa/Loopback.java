package io.homa;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.fail;

/** Helpers shared by the integration tests: loopback addresses, waiting on conditions, threads. */
final class Loopback {
    static final String HOST = "127.0.0.1";

    private Loopback() {
    }

    /** A builder bound to 127.0.0.1 on a free port. */
    static HomaConfig.Builder config() {
        return HomaConfig.builder().bindAddress(new InetSocketAddress(HOST, 0));
    }

    /** Where to call {@code server} on loopback (its bind address may be the wildcard). */
    static InetSocketAddress addressOf(HomaSocket server) {
        return new InetSocketAddress(HOST, server.localAddress().getPort());
    }

    /** Waits until {@code condition} holds, checking every millisecond; fails after {@code timeout}. */
    static void await(Duration timeout, BooleanSupplier condition, Supplier<String> whatFailed) {
        long giveUp = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - giveUp > 0) {
                fail("condition not reached within " + timeout + ": " + whatFailed.get());
            }
            LockSupport.parkNanos(1_000_000);
        }
    }

    /** Waits until neither socket holds RPC state. */
    static void awaitIdle(HomaSocket... sockets) {
        for (HomaSocket s : sockets) {
            await(Duration.ofSeconds(10), () -> s.metrics().activeRpcs() == 0, () -> s + " " + s.metrics());
        }
    }

    /** Names of the live threads of Homa sockets (event loops and executors). */
    static Set<String> homaThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(Thread::isAlive)
                .map(Thread::getName)
                .filter(n -> n.startsWith("homa-"))
                .collect(Collectors.toSet());
    }
}
