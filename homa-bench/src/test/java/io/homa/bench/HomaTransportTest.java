package io.homa.bench;

import io.netty.channel.uring.IoUring;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.homa.bench.TcpTransportTest.await;
import static io.homa.bench.TcpTransportTest.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** The Homa adapter echoes like the baselines (the protocol itself is tested in homa-netty). */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HomaTransportTest {
    @Test
    void echo__everySize_oneAtATime() throws Exception {
        try (EchoPair pair = EchoPair.open("homa")) {
            for (int size : new int[] {0, 1, 100, 100_000, 1_000_000}) {
                byte[] request = random(size, size);
                assertArrayEquals(request, await(pair.client().call(request)), "size " + size);
            }
        }
    }

    /**
     * Each variant echoes, and runs where its name says: two engines, or the named Netty transport
     * (io_uring only where the kernel allows it; elsewhere the socket falls back, which the
     * variant reports rather than hides).
     */
    @ParameterizedTest
    @ValueSource(strings = {"homa-2loops", "homa-epoll", "homa-iouring", "homa-nio"})
    void variants__echo_onWhatTheyName(String name) throws Exception {
        HomaTransport t = (HomaTransport) Transports.create(name);
        assertEquals(name, t.name());
        assertEquals(name.equals("homa-2loops"), t.throughputOnly());
        assertEquals(name.equals("homa-2loops") ? 2 : 1, t.config().eventLoops());
        String expected = switch (name) {
            case "homa-epoll" -> "epoll";
            case "homa-iouring" -> IoUring.isAvailable() ? "io_uring" : t.ioTransportInUse();
            case "homa-nio" -> "nio";
            default -> NettyIo.transportName();
        };
        assertEquals(expected, t.ioTransportInUse());
        try (EchoPair pair = EchoPair.open(t)) {
            List<CompletableFuture<byte[]>> replies = new ArrayList<>();
            List<byte[]> requests = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                requests.add(random(i % 4 == 0 ? 1_000_000 : 100, i));
                replies.add(pair.client().call(requests.get(i)));
            }
            for (int i = 0; i < requests.size(); i++) {
                assertArrayEquals(requests.get(i), await(replies.get(i)), name + " call " + i);
            }
        }
    }

    @Test
    void echo__manyOutstanding_andASecondClient() throws Exception {
        try (EchoPair pair = EchoPair.open("homa")) {
            EchoClient other = pair.newClient();
            List<byte[]> requests = new ArrayList<>();
            List<CompletableFuture<byte[]>> replies = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                byte[] request = random(i % 8 == 0 ? 200_000 : 100 + i, i);
                requests.add(request);
                replies.add((i % 2 == 0 ? pair.client() : other).call(request));
            }
            for (int i = 0; i < requests.size(); i++) {
                assertArrayEquals(requests.get(i), await(replies.get(i)), "call " + i);
            }
            assertEquals("homa", pair.transport().name());
        }
    }
}
