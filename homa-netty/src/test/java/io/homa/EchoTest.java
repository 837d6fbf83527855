package io.homa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetSocketAddress;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Echo of every interesting size over loopback, with the default configuration. */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class EchoTest {
    private static HomaSocket server;
    private static HomaSocket client;
    private static InetSocketAddress serverAddress;

    @BeforeAll
    static void open() {
        server = HomaSocket.open(HomaConfig.defaults());
        client = HomaSocket.open(HomaConfig.defaults());
        server.serve(r -> r.reply(r.toByteArray()));
        serverAddress = Loopback.addressOf(server);
    }

    @AfterAll
    static void close() {
        client.close();
        server.close();
    }

    /** Around one segment at MTU 1500 (1,432 B of payload), one GSO send, and far beyond. */
    @ParameterizedTest
    @ValueSource(ints = {0, 1, 1399, 1400, 1401, 1431, 1432, 1433, 65_536, 1 << 20, 29_400_000})
    void echoBytes(int size) throws Exception {
        byte[] request = new byte[size];
        new Random(size).nextBytes(request);
        byte[] response = client.call(serverAddress, request).get(60, TimeUnit.SECONDS);
        assertEquals(size, response.length);
        assertArrayEquals(request, response);
        Loopback.awaitIdle(client, server);
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 1401, 65_536, 1 << 20})
    void echoByteBufs(int size) throws Exception {
        byte[] bytes = new byte[size];
        new Random(size).nextBytes(bytes);
        ByteBuf request = PooledByteBufAllocator.DEFAULT.directBuffer(size).writeBytes(bytes);
        ByteBuf response = client.call(serverAddress, request).get(60, TimeUnit.SECONDS);
        try {
            Loopback.awaitReleased(request, "the request the socket owned");
            assertArrayEquals(bytes, ByteBufUtil.getBytes(response));
        } finally {
            response.release();
        }
    }

    @Test
    void zeroCopyServerRepliesWithPooledBuffers() throws Exception {
        try (HomaSocket s = HomaSocket.open(Loopback.config().build())) {
            s.serve(r -> {
                ByteBuf in = r.payload();
                ByteBuf out = PooledByteBufAllocator.DEFAULT.directBuffer(in.readableBytes() + 1);
                out.writeByte(7).writeBytes(in);
                in.release();
                r.reply(out);
            });
            for (int size : new int[]{0, 100, 5000, 300_000}) {
                byte[] req = new byte[size];
                new Random(size).nextBytes(req);
                byte[] resp = client.call(Loopback.addressOf(s), req).get(30, TimeUnit.SECONDS);
                assertEquals(size + 1, resp.length);
                assertEquals(7, resp[0]);
                byte[] rest = new byte[size];
                System.arraycopy(resp, 1, rest, 0, size);
                assertArrayEquals(req, rest);
            }
            Loopback.awaitIdle(client, s);
        }
    }

    @Test
    void metricsCountWhatHappened() throws Exception {
        client.call(serverAddress, new byte[100]).get(30, TimeUnit.SECONDS);
        Loopback.awaitIdle(client, server);
        HomaMetrics m = client.metrics();
        assertTrue(m.packetsSent("DATA") > 0, m.toString());
        assertTrue(m.packetsReceived("DATA") > 0, m.toString());
        assertTrue(m.shell(HomaMetrics.Shell.CALLS_SUCCEEDED) > 0, m.toString());
        assertTrue(m.shell(HomaMetrics.Shell.DATAGRAMS_SENT) > 0, m.toString());
        assertEquals(0, m.activeRpcs(), m.toString());
        assertTrue(server.metrics().shell(HomaMetrics.Shell.REQUESTS_REPLIED) > 0);
    }
}
