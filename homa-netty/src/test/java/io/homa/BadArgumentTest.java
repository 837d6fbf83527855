package io.homa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Arguments that can never work are refused at once, with a message that names them. */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class BadArgumentTest {
    private static final int MAX = 10_000;
    private static HomaSocket socket;
    private static InetSocketAddress self;

    @BeforeAll
    static void open() {
        socket = HomaSocket.open(Loopback.config().maxMessageLength(MAX).build());
        self = Loopback.addressOf(socket);
    }

    @AfterAll
    static void close() {
        socket.close();
    }

    private static void refused(Class<? extends HomaException> type, String mentions, Runnable r) {
        HomaException e = assertThrows(type, r::run);
        assertTrue(e.getMessage().contains(mentions), "'" + e.getMessage() + "' should mention '" + mentions + "'");
    }

    @Test
    void nullsAreNamed() {
        refused(HomaBadArgumentException.class, "server", () -> socket.call(null, new byte[1]));
        refused(HomaBadArgumentException.class, "request", () -> socket.call(self, (byte[]) null));
        refused(HomaBadArgumentException.class, "request", () -> socket.call(self, (ByteBuf) null));
        refused(HomaBadArgumentException.class, "deadline", () -> socket.call(self, new byte[1], (Duration) null));
        refused(HomaBadArgumentException.class, "options", () -> socket.call(self, new byte[1], (CallOptions) null));
        refused(HomaBadArgumentException.class, "deadline", () -> CallOptions.DEFAULT.withDeadline(Duration.ZERO));
        refused(HomaBadArgumentException.class, "handler", () -> socket.serve(null));
        refused(HomaBadArgumentException.class, "config", () -> HomaSocket.open(null));
    }

    @Test
    void deadlinesMustBePositive() {
        refused(HomaBadArgumentException.class, "deadline", () -> socket.call(self, new byte[1], Duration.ZERO));
        refused(HomaBadArgumentException.class, "deadline", () -> socket.call(self, new byte[1], Duration.ofMillis(-5)));
    }

    @Test
    void addressesMustBeUsable() {
        refused(HomaBadArgumentException.class, "unresolved",
                () -> socket.call(InetSocketAddress.createUnresolved("nowhere.invalid", 1), new byte[1]));
        refused(HomaBadArgumentException.class, "port 0", () -> socket.call(new InetSocketAddress(Loopback.HOST, 0), new byte[1]));
    }

    @Test
    void oversizeRequestsAreRefusedAndTheirBuffersReleased() {
        HomaMessageTooLargeException e = assertThrows(HomaMessageTooLargeException.class,
                () -> socket.call(self, new byte[MAX + 1]));
        assertEquals(HomaException.Kind.MESSAGE_TOO_LARGE, e.kind());
        assertTrue(e.getMessage().contains(String.valueOf(MAX + 1)) && e.getMessage().contains(String.valueOf(MAX)),
                e.getMessage());
        ByteBuf big = PooledByteBufAllocator.DEFAULT.directBuffer(MAX + 1).writeZero(MAX + 1);
        assertThrows(HomaMessageTooLargeException.class, () -> socket.call(self, big));
        assertEquals(0, big.refCnt(), "ownership passed even though the call was refused");
    }

    @Test
    void oversizeRepliesAreRefusedAndASmallerOneMayFollow() throws Exception {
        AtomicReference<Throwable> refused = new AtomicReference<>();
        socket.serve(r -> {
            try {
                r.reply(new byte[MAX + 1]);
            } catch (HomaMessageTooLargeException e) {
                refused.set(e);
                r.reply(new byte[]{42});
            }
        });
        byte[] reply = socket.call(self, new byte[1]).get(30, TimeUnit.SECONDS);
        assertEquals(42, reply[0]);
        assertInstanceOf(HomaMessageTooLargeException.class, refused.get());
    }

    @Test
    void badConfigurationValuesAreNamed() {
        refused(HomaBadArgumentException.class, "mtu", () -> HomaConfig.builder().mtu(10).build());
        refused(HomaBadArgumentException.class, "eventLoops", () -> HomaConfig.builder().eventLoops(3).build());
        refused(HomaBadArgumentException.class, "defaultDeadline",
                () -> HomaConfig.builder().defaultDeadline(Duration.ZERO).build());
        refused(HomaBadArgumentException.class, "tosByLevel", () -> HomaConfig.builder().tosByLevel(1, 2).build());
        refused(HomaBadArgumentException.class, "bindAddress", () -> HomaConfig.builder().bindAddress(null).build());
        refused(HomaBadArgumentException.class, "maxNicQueue", () -> HomaConfig.builder().maxNicQueue(Duration.ofNanos(-1)));
        refused(HomaBadArgumentException.class, "cutoffsInterval", () -> HomaConfig.builder().cutoffsInterval(null));
        refused(HomaBadArgumentException.class, "grantFifoFraction",
                () -> HomaConfig.builder().grantFifoFraction(501).build());
        refused(HomaBadArgumentException.class, "defaultUnscheduledPriority",
                () -> HomaConfig.builder().maxScheduledPriority(6).defaultUnscheduledPriority(6).build());
        refused(HomaBadArgumentException.class, "maxQueuedRequests", () -> HomaConfig.builder().maxQueuedRequests(0).build());
    }

    @Test
    void unknownMetricNamesAreNamed() {
        HomaMetrics m = socket.metrics();
        refused(HomaBadArgumentException.class, "NO_SUCH", () -> m.counter("NO_SUCH"));
        refused(HomaBadArgumentException.class, "drop reason", () -> m.drops("NO_SUCH"));
        refused(HomaBadArgumentException.class, "FREEZE", () -> m.packetsSent("FREEZE"));
        refused(HomaBadArgumentException.class, "null", () -> m.packetsReceived(null));
    }

    @Test
    void badFaultRatesAreNamed() {
        refused(HomaBadArgumentException.class, "dropRate",
                () -> new io.homa.testing.DatagramFaults(1.5, 0, 0, Duration.ZERO));
        refused(HomaBadArgumentException.class, "reorderDelayMax",
                () -> new io.homa.testing.DatagramFaults(0, 0, 0, null));
        refused(HomaBadArgumentException.class, "null", () -> io.homa.testing.FaultInjection.inject(
                HomaConfig.builder(), 1, null, io.homa.testing.DatagramFaults.NONE));
    }

    @Test
    void aPortInUseIsAnIoError() {
        HomaException e = assertThrows(HomaException.class,
                () -> HomaSocket.open(HomaConfig.builder().bindAddress(socket.localAddress()).build()));
        assertEquals(HomaException.Kind.IO_ERROR, e.kind());
        assertTrue(e.getMessage().contains(String.valueOf(socket.localAddress().getPort())), e.getMessage());
    }
}
