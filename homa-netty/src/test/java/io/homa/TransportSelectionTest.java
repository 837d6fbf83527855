package io.homa;

import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which transport this surefire run really uses. The suite runs twice (epoll, then NIO with
 * {@code -Dio.netty.transport.noNative=true}); should epoll's native library fail to load, the
 * first run would silently test NIO twice, and GSO and GRO would silently be off. The pom names
 * the expected transport per run ({@code homa.test.transport}); this test fails on any other.
 */
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
            if (expected.equals("epoll")) {
                assertTrue(gsoSends > 0, "GSO is on but no send carried several segments: " + client.metrics());
            } else {
                assertEquals(0, gsoSends, client.metrics().toString());
            }
        }
    }

    @Test
    void groIsOnWhereAskedAndNioWhereNativeIsOff() throws Exception {
        try (HomaSocket gro = HomaSocket.open(Loopback.config().gro(true).build());
             HomaSocket nio = HomaSocket.open(Loopback.config().nativeTransport(false).gro(true).build())) {
            Loopback.assertTransport(gro);
            Loopback.assertTransport(nio);
            assertEquals("nio", ((NettyHomaSocket) nio).transport().name());
        }
    }
}
