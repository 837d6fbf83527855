package io.homa;

import io.homa.internal.transport.Transport;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Echo and a small burst of concurrent calls under each of the I/O shell's switches. */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class ShellOptionsTest {
    static Stream<Arguments> configs() {
        return Stream.of(
                Arguments.of("one socket, no TOS", Loopback.config().prioritySockets(false)),
                Arguments.of("no GSO", Loopback.config().gso(false)),
                Arguments.of("GRO", Loopback.config().gro(true)),
                Arguments.of("no receive batching", Loopback.config().receiveBatch(1)),
                Arguments.of("busy poll", Loopback.config().busyPoll(true)),
                Arguments.of("inline execution", Loopback.config().inlineExecution(true)),
                Arguments.of("loopback MTU", Loopback.config().mtu(65_535)),
                // The pacer is off unless the link is described: these keep its holds and wake-ups run.
                Arguments.of("jumbo MTU, pacer", Loopback.config().mtu(9000).pacerEnabled(true)),
                Arguments.of("pacer at the default link rate", Loopback.config().pacerEnabled(true)),
                Arguments.of("pacer at a 1 Gbit/s link", Loopback.config().linkMbps(1_000)),
                Arguments.of("no call limit", Loopback.config().maxCallsPerServer(0)),
                Arguments.of("two event loops on one port", Loopback.config().eventLoops(2)),
                Arguments.of("four event loops, one socket each", Loopback.config().eventLoops(4).prioritySockets(false)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("configs")
    void echoWorks(String name, HomaConfig.Builder builder) throws Exception {
        HomaConfig config = builder.build();
        try (HomaSocket server = HomaSocket.open(config); HomaSocket client = HomaSocket.open(config)) {
            server.serve(r -> r.reply(r.toByteArray()));
            InetSocketAddress to = Loopback.addressOf(server);
            for (int size : new int[]{0, 1, 1401, 70_000, 3_000_000}) {
                byte[] req = new byte[size];
                new Random(size).nextBytes(req);
                assertArrayEquals(req, client.call(to, req).get(60, TimeUnit.SECONDS), name + ", size " + size);
            }
            List<CompletableFuture<byte[]>> calls = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                byte[] req = new byte[8 + (i % 50) * 100];
                ByteBuffer.wrap(req).putLong(i);
                calls.add(client.call(to, req));
            }
            for (int i = 0; i < calls.size(); i++) {
                byte[] resp = calls.get(i).get(60, TimeUnit.SECONDS);
                assertEquals(i, ByteBuffer.wrap(resp).getLong(), name);
                assertEquals(8 + (i % 50) * 100, resp.length, name);
            }
            Loopback.awaitIdle(client, server);
            // The pacer runs exactly where asked (a 3 MB message outruns any of these links' allowance).
            long holds = client.metrics().counter("PACER_HOLDS") + server.metrics().counter("PACER_HOLDS");
            assertEquals(config.engineConfig().pacerEnabled, holds > 0, name + ": pacer holds " + holds);
            // GSO and GRO are on exactly where asked and available (they would turn off silently under NIO).
            Loopback.assertTransport(server);
            Loopback.assertTransport(client);
            Transport t = Loopback.shellOf(client).transport();
            boolean segmentsFit = 2L * config.engineConfig().maxDatagram() <= Transport.MAX_UDP_PAYLOAD;
            long gsoSends = client.metrics().shell(HomaMetrics.Shell.GSO_SENDS);
            // With GSO on, a message's segments go as one send when they fit; runs of equal-size
            // datagrams of several messages may make GSO sends on loopback too (SendBatchingTest).
            String what = name + ": GSO sends " + gsoSends + ", " + t.name() + ", gso " + t.gso;
            if (!t.gso) {
                assertEquals(0, gsoSends, what);
            } else if (segmentsFit) {
                assertTrue(gsoSends > 0, what);
            }
        }
    }
}
