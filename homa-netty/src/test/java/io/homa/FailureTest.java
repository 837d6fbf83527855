package io.homa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.channels.DatagramChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What callers see when servers vanish, stay silent or are too slow, and when sockets close. */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class FailureTest {
    /** The exception a failed future carries. */
    private static Throwable failure(CompletableFuture<?> f, long seconds) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(seconds, TimeUnit.SECONDS));
        return e.getCause();
    }

    @Test
    void callsToAServerThatIsGoneFailWithTimeoutWithinTheDeadline() throws Exception {
        InetSocketAddress gone;
        try (HomaSocket server = HomaSocket.open(Loopback.config().build())) {
            gone = Loopback.addressOf(server);
        }
        // A short protocol timeout (50 ms of silence) and a generous deadline: the protocol notices.
        try (HomaSocket client = HomaSocket.open(Loopback.config().timeoutTicks(50).build())) {
            Duration deadline = Duration.ofSeconds(10);
            List<CompletableFuture<byte[]>> calls = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                calls.add(client.call(gone, new byte[i * 1000], deadline));
            }
            for (CompletableFuture<byte[]> f : calls) {
                Throwable t = failure(f, deadline.toSeconds());
                assertInstanceOf(HomaTimeoutException.class, t);
                assertEquals(HomaException.Kind.TIMEOUT, ((HomaException) t).kind());
                assertTrue(t.getMessage().contains("silent"), t.getMessage());
            }
            Loopback.awaitIdle(client);
        }
    }

    @Test
    void aSilentPeerMakesTheDeadlineExpire() throws Exception {
        // A UDP socket that reads nothing: Homa hears no answer, not even RPC_UNKNOWN.
        try (DatagramChannel sink = DatagramChannel.open();
             HomaSocket client = HomaSocket.open(Loopback.config().build())) {
            sink.bind(new InetSocketAddress(Loopback.HOST, 0));
            InetSocketAddress to = (InetSocketAddress) sink.getLocalAddress();
            Duration deadline = Duration.ofMillis(300);
            Throwable t = failure(client.call(to, new byte[10], deadline), 10);
            assertInstanceOf(HomaTimeoutException.class, t);
            assertTrue(t.getMessage().contains("deadline of PT0.3S"), t.getMessage());
            Loopback.awaitIdle(client);
            assertEquals(1, client.metrics().shell(HomaMetrics.Shell.CALLS_DEADLINE_EXPIRED));
        }
    }

    @Test
    void callsWaitingForASlotAlsoExpire() throws Exception {
        try (HomaSocket server = HomaSocket.open(Loopback.config().build());
             HomaSocket client = HomaSocket.open(Loopback.config().maxCallsPerServer(1).build())) {
            server.serve(r -> { }); // never replies
            CompletableFuture<byte[]> first = client.call(Loopback.addressOf(server), new byte[1], Duration.ofMillis(400));
            CompletableFuture<byte[]> second = client.call(Loopback.addressOf(server), new byte[1], Duration.ofMillis(200));
            assertInstanceOf(HomaTimeoutException.class, failure(second, 10));
            assertInstanceOf(HomaTimeoutException.class, failure(first, 10));
            assertEquals(1, client.metrics().shell(HomaMetrics.Shell.CALLS_QUEUED));
        }
    }

    @Test
    void closeFailsEveryCallInFlightPromptlyAndLeavesNoThread() throws Exception {
        Set<String> before = Loopback.homaThreads();
        HomaSocket server = HomaSocket.open(Loopback.config().build());
        HomaSocket client = HomaSocket.open(Loopback.config().maxCallsPerServer(100).build());
        List<CompletableFuture<?>> calls = new ArrayList<>();
        try {
            server.serve(r -> { }); // never replies: every call stays in flight
            for (int i = 0; i < 500; i++) {
                calls.add(client.call(Loopback.addressOf(server), new byte[100 + i]));
            }
            for (int i = 0; i < 10; i++) {
                ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(2000).writeZero(2000);
                calls.add(client.call(Loopback.addressOf(server), b)); // owned by the socket now
            }
            Loopback.await(Duration.ofSeconds(10), () -> server.metrics().shell(HomaMetrics.Shell.REQUESTS_HANDLED) >= 100,
                    server::toString);
        } finally {
            client.close();
        }
        for (CompletableFuture<?> f : calls) {
            Throwable t = failure(f, 5);
            assertInstanceOf(HomaClosedException.class, t);
            assertEquals(HomaException.Kind.SOCKET_CLOSED, ((HomaException) t).kind());
            assertTrue(t.getMessage().contains("closed"), t.getMessage());
        }
        client.close(); // idempotent
        assertFalse(client.isOpen());
        assertInstanceOf(HomaClosedException.class, failure(client.call(Loopback.addressOf(server), new byte[1]), 5));
        ByteBuf late = PooledByteBufAllocator.DEFAULT.directBuffer(10).writeZero(10);
        assertInstanceOf(HomaClosedException.class, failure(client.call(Loopback.addressOf(server), late), 5));
        assertEquals(0, late.refCnt(), "a call refused for closing still releases its buffer");
        HomaMetrics m = client.metrics();
        assertEquals(510, m.shell(HomaMetrics.Shell.CALLS_CLOSED), m.toString());
        server.close();
        Set<String> left = Loopback.homaThreads();
        left.removeAll(before);
        assertTrue(left.isEmpty(), "threads left after close: " + left);
    }

    @Test
    void closeFromInsideAHandlerWorks() throws Exception {
        HomaSocket server = HomaSocket.open(Loopback.config().build());
        try (HomaSocket client = HomaSocket.open(Loopback.config().build())) {
            server.serve(r -> {
                r.reply(new byte[]{1});
                server.close();
            });
            // Close does not linger: the reply reaches the client, or (when the close overtakes the
            // reply's send) the server falls silent and the call times out. Nothing else.
            CompletableFuture<byte[]> call = client.call(Loopback.addressOf(server), new byte[1], Duration.ofSeconds(5));
            try {
                assertArrayEquals(new byte[]{1}, call.get(10, TimeUnit.SECONDS));
            } catch (ExecutionException e) {
                assertInstanceOf(HomaTimeoutException.class, e.getCause());
            }
            Loopback.await(Duration.ofSeconds(10), () -> !server.isOpen(), server::toString);
        }
    }
}
