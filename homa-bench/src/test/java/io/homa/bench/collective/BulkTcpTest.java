package io.homa.bench.collective;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The testbed's TCP bulk flow: every byte sent is received, and bad arguments say what is wrong. */
class BulkTcpTest {
    @Test
    void aFlowOnLoopback_receivesEveryByteSent() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture<BulkTcp.Flow> received = CompletableFuture.supplyAsync(() -> {
                try {
                    return BulkTcp.receive(server, 0.2);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            BulkTcp.Flow sent = BulkTcp.send(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()), 0.2);
            BulkTcp.Flow got = received.get(BulkTcp.GRACE_SECONDS + 10, TimeUnit.SECONDS);
            assertTrue(sent.bytes() > 0, "the sender wrote for 0.2 s");
            assertEquals(sent.bytes(), got.bytes(), "every byte arrived");
            assertTrue(got.mbitPerSecond() > 0);
        }
    }

    @Test
    void badArguments_exitTwo_andSayWhatIsWrong() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        assertEquals(2, BulkTcp.execute(new String[]{"--seconds", "1"}, out));
        assertTrue(bytes.toString(StandardCharsets.UTF_8).contains("exactly one of --listen"), bytes.toString(StandardCharsets.UTF_8));
        assertEquals(2, BulkTcp.execute(new String[]{"--to", "nohost", "--seconds", "1"}, out));
        assertTrue(bytes.toString(StandardCharsets.UTF_8).contains("HOST:PORT"));
        assertEquals(2, BulkTcp.execute(new String[]{"--listen", "5000", "--seconds", "0"}, out));
        assertTrue(bytes.toString(StandardCharsets.UTF_8).contains("--seconds must be"));
    }
}
