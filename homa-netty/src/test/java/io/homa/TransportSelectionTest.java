package io.homa;

import io.netty.channel.epoll.Epoll;
import io.netty.channel.uring.IoUring;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which transport this surefire run really uses. The suite runs on epoll, then on NIO with
 * {@code -Dio.netty.transport.noNative=true}, and part of it on io_uring with
 * {@code -Dio.homa.ioTransport=io_uring}; should a native library fail to load, a run would
 * silently test another transport, and GSO and GRO would silently be off. The pom names
 * the expected transport per run ({@code homa.test.transport}); this test fails on any other.
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class TransportSelectionTest {
    @Test
    void theDefaultSocketRunsOnThisRunsTransportWithGso() throws Exception {
        String expected = Loopback.expectedTransport();
        // MTU 1,500 (loopback's own would fit a whole GSO send's 64 KB in one datagram).
        try (HomaSocket server = HomaSocket.open(Loopback.config().mtu(1_500).build());
             HomaSocket client = HomaSocket.open(Loopback.config().mtu(1_500).build())) {
            Loopback.assertTransport(server);
            Loopback.assertTransport(client);
            assertTrue(client.toString().contains(expected), client.toString());
            server.serve(r -> r.reply(r.toByteArray()));
            byte[] big = new byte[300_000];
            new Random(1).nextBytes(big);
            assertArrayEquals(big, client.call(Loopback.addressOf(server), big).get(30, TimeUnit.SECONDS));
            long gsoSends = client.metrics().shell(HomaMetrics.Shell.GSO_SENDS);
            if (!expected.equals("nio")) {
                assertTrue(gsoSends > 0, "GSO is on but no send carried several segments: " + client.metrics());
            } else {
                assertEquals(0, gsoSends, client.metrics().toString());
            }
        }
    }

    /**
     * Each transport can be asked for, and one this process cannot use falls back: to the other
     * native one, then to NIO (in the NIO run, with native transports off, every choice ends on
     * NIO). The socket and its metrics report what runs, and it carries calls.
     */
    @ParameterizedTest
    @EnumSource(HomaConfig.IoTransport.class)
    void eachTransportCanBeAskedForAndFallsBackWhereItCannotRun(HomaConfig.IoTransport asked) throws Exception {
        String expected = switch (asked) {
            case AUTO -> Loopback.expectedTransport();
            case IO_URING -> IoUring.isAvailable() ? "io_uring" : Epoll.isAvailable() ? "epoll" : "nio";
            case EPOLL -> Epoll.isAvailable() ? "epoll" : IoUring.isAvailable() ? "io_uring" : "nio";
            case NIO -> "nio";
        };
        HomaConfig config = Loopback.config().ioTransport(asked).build();
        try (HomaSocket server = HomaSocket.open(config); HomaSocket client = HomaSocket.open(config)) {
            assertEquals(expected, Loopback.shellOf(client).transport().name(), "asked for " + asked);
            assertEquals(expected, client.metrics().transport());
            assertTrue(client.toString().contains(expected), client.toString());
            server.serve(r -> r.reply(r.toByteArray()));
            for (int size : new int[]{100, 200_000}) {
                byte[] request = new byte[size];
                new Random(size).nextBytes(request);
                assertArrayEquals(request, client.call(Loopback.addressOf(server), request).get(30, TimeUnit.SECONDS));
            }
        }
    }

    @Test
    void groIsOnWhereAskedAndNioWhereNativeIsOff() throws Exception {
        try (HomaSocket gro = HomaSocket.open(Loopback.config().gro(true).build());
             HomaSocket nio = HomaSocket.open(Loopback.config().nativeTransport(false).gro(true).build())) {
            Loopback.assertTransport(gro);
            Loopback.assertTransport(nio);
            assertEquals("nio", Loopback.shellOf(nio).transport().name());
        }
    }
}
