package io.homa;

import io.homa.internal.ShellConfig;
import io.homa.internal.loop.EngineLoops;
import io.homa.internal.transport.Transport;
import io.netty.buffer.ByteBuf;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringDatagramChannel;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Helpers shared by the integration tests: loopback addresses, waiting on conditions, threads. */
public final class Loopback {
    public static final String HOST = "127.0.0.1";

    private Loopback() {
    }

    /** A builder bound to 127.0.0.1 on a free port. */
    public static HomaConfig.Builder config() {
        return HomaConfig.builder().bindAddress(new InetSocketAddress(HOST, 0));
    }

    /** Where to call {@code server} on loopback (its bind address may be the wildcard). */
    public static InetSocketAddress addressOf(HomaSocket server) {
        return new InetSocketAddress(HOST, server.localAddress().getPort());
    }

    /**
     * The transport this surefire run must use, from the system property {@code homa.test.transport}
     * that the pom sets per execution ({@code epoll} in the default run, {@code nio} in the run with
     * {@code -Dio.netty.transport.noNative=true}, {@code io_uring} in the run with
     * {@code -Dio.homa.ioTransport=io_uring}). Epoll and io_uring exist only on Linux, and io_uring
     * only where the kernel and its seccomp filter allow it: elsewhere such a run is skipped
     * (saying why) rather than passed on another transport.
     */
    public static String expectedTransport() {
        String t = System.getProperty("homa.test.transport");
        assertNotNull(t, "homa.test.transport is not set (the pom sets it for each surefire execution)");
        assumeTrue(t.equals("nio") || System.getProperty("os.name").startsWith("Linux"),
                t + " is Linux only; this is " + System.getProperty("os.name"));
        if (t.equals("io_uring")) {
            assumeTrue(IoUring.isAvailable(), "io_uring is unavailable here: " + IoUring.unavailabilityCause());
        }
        return t;
    }

    /**
     * Checks that {@code s} runs on the transport this run expects and that GSO and GRO are on
     * exactly where its configuration asks for them and the transport has them (GSO needs a kernel
     * with UDP segmentation offload and a native transport; GRO needs epoll).
     */
    public static void assertTransport(HomaSocket s) {
        HomaConfig c = s.config();
        Transport t = shellOf(s).transport();
        boolean nio = !c.nativeTransport() || c.ioTransport() == HomaConfig.IoTransport.NIO
                || expectedTransport().equals("nio");
        String expected = nio ? "nio" : expectedTransport();
        assertEquals(expected, t.name(), s + " runs on the wrong transport");
        assertEquals(expected, s.metrics().transport(), s + ": the transport its metrics report");
        boolean epoll = expected.equals("epoll");
        boolean gsoPossible = switch (expected) {
            case "epoll" -> EpollDatagramChannel.isSegmentedDatagramPacketSupported();
            case "io_uring" -> IoUringDatagramChannel.isSegmentedDatagramPacketSupported();
            default -> false;
        };
        if (!nio && c.gso()) {
            assumeTrue(gsoPossible, "this kernel has no UDP GSO");
        }
        assertEquals(!nio && c.gso(), t.gso, s + ": GSO active");
        assertEquals(epoll && c.gro(), t.gro, s + ": GRO active");
        if (epoll) {
            assertEquals(c.gro(), shellOf(s).channel(0, 0).config().getOption(EpollChannelOption.UDP_GRO),
                    s + ": UDP_GRO option of its socket");
        }
    }

    /** The I/O shell under {@code s}: its transport, channels and executor. */
    public static EngineLoops shellOf(HomaSocket s) {
        return ((NettyHomaSocket) s).shell();
    }

    /** What a socket's shell is told of {@code config}. */
    public static ShellConfig shellConfig(HomaConfig config) {
        return NettyHomaSocket.shellConfig(config);
    }

    /** Waits until {@code condition} holds, checking every millisecond; fails after {@code timeout}. */
    public static void await(Duration timeout, BooleanSupplier condition, Supplier<String> whatFailed) {
        long giveUp = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - giveUp > 0) {
                fail("condition not reached within " + timeout + ": " + whatFailed.get());
            }
            LockSupport.parkNanos(1_000_000);
        }
    }

    /**
     * Waits until the socket released {@code buffer}, a request or response it owned. Not at once
     * when the future completes: the thread that sent the buffer's last datagram drops its slice
     * just after the system call, and the response may be read meanwhile by another thread.
     */
    public static void awaitReleased(ByteBuf buffer, String what) {
        await(Duration.ofSeconds(10), () -> buffer.refCnt() == 0, () -> what + ": still referenced " + buffer.refCnt() + " times");
    }

    /** Waits until neither socket holds RPC state. */
    public static void awaitIdle(HomaSocket... sockets) {
        for (HomaSocket s : sockets) {
            await(Duration.ofSeconds(10), () -> s.metrics().activeRpcs() == 0, () -> s + " " + s.metrics());
        }
    }

    /** Names of the live threads of Homa sockets (event loops and executors). */
    public static Set<String> homaThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(Thread::isAlive)
                .map(Thread::getName)
                .filter(n -> n.startsWith("homa-"))
                .collect(Collectors.toSet());
    }
}
