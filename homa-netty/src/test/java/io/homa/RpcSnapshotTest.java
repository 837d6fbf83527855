package io.homa;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link HomaSocket#rpcs()} (live RPC state) and {@link HomaSocket#addCallListener} on real sockets. */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class RpcSnapshotTest {
    private HomaSocket server;
    private HomaSocket client;
    private InetSocketAddress serverAddress;
    private final BlockingQueue<HomaRequest> held = new LinkedBlockingQueue<>();

    @BeforeEach
    void open() {
        server = HomaSocket.open(Loopback.config().build());
        client = HomaSocket.open(Loopback.config().build());
        server.serve(held::add); // replies later, when the test says so
        serverAddress = Loopback.addressOf(server);
    }

    @AfterEach
    void close() {
        client.close();
        server.close();
    }

    @Test
    void rpcs_showsBothSidesOfACallInProgress_thenNothing() throws Exception {
        CompletableFuture<byte[]> f = client.call(serverAddress, new byte[50_000]);
        HomaRequest r = held.poll(30, TimeUnit.SECONDS);
        assertNotNull(r, "the request reached the handler");

        List<RpcInfo> serverSide = server.rpcs();
        assertEquals(1, serverSide.size(), serverSide.toString());
        RpcInfo s = serverSide.get(0);
        assertEquals(RpcInfo.Role.SERVER, s.role());
        assertEquals("SERVER_PROCESSING", s.state());
        assertEquals(-1, s.inLength(), "the request was delivered: the engine holds it no more");
        assertEquals(0, s.gaps());
        assertEquals(-1, s.outLength(), "no response yet");
        assertEquals(client.localAddress().getPort(), s.peer().getPort());
        assertFalse(s.age().isNegative());
        assertEquals(1, s.id() & 1, "server ids are odd");

        List<RpcInfo> clientSide = client.rpcs();
        assertEquals(1, clientSide.size(), clientSide.toString());
        RpcInfo c = clientSide.get(0);
        assertEquals(RpcInfo.Role.CLIENT, c.role());
        assertEquals("CLIENT_ACTIVE", c.state());
        assertEquals(s.id() ^ 1, c.id());
        assertEquals(50_000, c.outLength());
        assertEquals(50_000, c.bytesSent());
        assertTrue(c.bytesGranted() >= 50_000, c.toString());
        assertFalse(c.waitingForGrants());
        assertEquals(-1, c.inLength(), "no response yet");
        assertEquals(serverAddress.getPort(), c.peer().getPort());
        assertThrows(UnsupportedOperationException.class, () -> clientSide.add(c), "the list is immutable");

        r.reply(new byte[7]);
        assertEquals(7, f.get(30, TimeUnit.SECONDS).length);
        Loopback.await(Duration.ofSeconds(10), () -> client.rpcs().isEmpty() && server.rpcs().isEmpty(),
                () -> client.rpcs() + " " + server.rpcs());
    }

    @Test
    void rpcs_isEmptyAfterClose() {
        client.call(serverAddress, new byte[10]);
        client.close();
        assertTrue(client.rpcs().isEmpty());
    }

    @Test
    void callListener_hearsSizesAndDuration_untilRemoved() throws Exception {
        server.serve(r -> r.reply(new byte[r.length() * 2]));
        BlockingQueue<long[]> heard = new LinkedBlockingQueue<>();
        BlockingQueue<InetSocketAddress> servers = new LinkedBlockingQueue<>();
        CallListener l = (to, requestBytes, responseBytes, nanos) -> {
            servers.add(to);
            heard.add(new long[] {requestBytes, responseBytes, nanos});
        };
        client.addCallListener(l);
        client.call(serverAddress, new byte[300]).get(30, TimeUnit.SECONDS);
        long[] ok = heard.poll(); // heard before the future completed
        assertNotNull(ok);
        assertEquals(300, ok[0]);
        assertEquals(600, ok[1]);
        assertTrue(ok[2] > 0);
        assertEquals(serverAddress, servers.poll());

        // A call that fails (nobody listens on the port the closed server had) is heard with -1.
        server.close();
        CompletableFuture<byte[]> failed = client.call(serverAddress, new byte[5], Duration.ofMillis(200));
        assertThrows(Exception.class, () -> failed.get(30, TimeUnit.SECONDS));
        long[] bad = heard.poll(30, TimeUnit.SECONDS);
        assertNotNull(bad);
        assertEquals(5, bad[0]);
        assertEquals(-1, bad[1]);

        client.removeCallListener(l);
        CompletableFuture<byte[]> unheard = client.call(serverAddress, new byte[5], Duration.ofMillis(50));
        assertThrows(Exception.class, () -> unheard.get(30, TimeUnit.SECONDS));
        assertTrue(heard.isEmpty(), "a removed listener hears nothing");
        assertThrows(HomaBadArgumentException.class, () -> client.addCallListener(null));
    }
}
