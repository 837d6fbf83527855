package io.homa;

import io.homa.HomaMetrics.Shell;
import io.homa.testing.DatagramFaults;
import io.homa.testing.FaultInjection;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Zero-copy send ({@link HomaConfig#zeroCopySend()}): a direct {@code ByteBuf} request and the
 * reply the server makes of the received buffer leave as header plus slices of those buffers, so
 * the shell's count of payload bytes copied into send buffers stays 0 on both sides, with GSO on
 * and off, and under loss, where the retransmitted segments are sliced from the same buffers (the
 * echoed bytes come back intact). A {@code byte[]} payload, and any payload with the setting off,
 * is copied once. On NIO, whose datagram channel copies a composite into one buffer anyway, the
 * shell keeps the single copy (checked too). The leak detector (PARANOID, {@link LeakCheck}) checks every slice is released.
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class ZeroCopySendTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    /** Fifteen segments and a shorter last one: several GSO sends. */
    private static final int SIZE = 300_001;

    private static byte[] random(int size) {
        byte[] b = new byte[size];
        new Random(size).nextBytes(b);
        return b;
    }

    /** Whether this run is on epoll, where payloads are sent in place (NIO copies a composite anyway). */
    private static boolean epoll() {
        return Loopback.expectedTransport().equals("epoll");
    }

    private static HomaConfig.Builder config(boolean gso, double dataLoss, long seed) {
        // 20 KB datagrams: large enough to be sent in place, small enough for three in a GSO send.
        HomaConfig.Builder b = Loopback.config().mtu(20_000).gso(gso).zeroCopySend(true);
        if (dataLoss > 0) {
            DatagramFaults drop = new DatagramFaults(dataLoss, 0, 0, Duration.ZERO);
            b = FaultInjection.inject(b, seed, drop, DatagramFaults.NONE);
        }
        return b;
    }

    @ParameterizedTest(name = "gso={0} loss={1}")
    @CsvSource({"true, 0", "false, 0", "true, 0.1", "false, 0.1"})
    void byteBufRequestAndEchoedReplyAreSentWithoutCopying(boolean gso, double loss) throws Exception {
        try (HomaSocket server = HomaSocket.open(config(gso, loss, 1).build());
             HomaSocket client = HomaSocket.open(config(gso, loss, 2).build())) {
            server.serve(r -> r.reply(r.payload())); // the received buffer goes back out in place
            byte[] bytes = random(SIZE);
            ByteBuf request = PooledByteBufAllocator.DEFAULT.directBuffer(SIZE).writeBytes(bytes);
            ByteBuf response = client.call(Loopback.addressOf(server), request).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            try {
                assertArrayEquals(bytes, ByteBufUtil.getBytes(response), "echoed bytes");
            } finally {
                response.release();
            }
            Loopback.awaitIdle(client, server);
            Loopback.awaitReleased(request, "the request the socket owned");
            HomaMetrics c = client.metrics();
            HomaMetrics s = server.metrics();
            Shell none = epoll() ? Shell.SEND_PAYLOAD_BYTES_COPIED : Shell.SEND_PAYLOAD_BYTES_IN_PLACE;
            Shell all = epoll() ? Shell.SEND_PAYLOAD_BYTES_IN_PLACE : Shell.SEND_PAYLOAD_BYTES_COPIED;
            for (HomaMetrics m : new HomaMetrics[] {c, s}) {
                assertEquals(0, m.shell(none), none + ": " + m);
                assertTrue(m.shell(all) >= SIZE, all + ": " + m);
            }
            Loopback.assertTransport(client);
            if (gso && epoll() && loss == 0) { // (fault injection sends each segment alone)
                assertTrue(c.shell(Shell.GSO_SENDS) > 0 && s.shell(Shell.GSO_SENDS) > 0, "GSO sends over slices: " + c + " / " + s);
            }
            if (loss > 0) {
                assertTrue(c.shell(Shell.FAULTS_DROPPED) + s.shell(Shell.FAULTS_DROPPED) > 0, "no datagram was dropped");
                // Loss is recovered by a retransmission, or, when the server never saw the request
                // before the client asked for its response, by a restart (RPC_UNKNOWN_SINCE: the
                // whole request again); the seeded faults give either, depending on timing.
                long resent = c.retransmissions() + s.retransmissions() + c.counter("REQUEST_RESTARTS");
                assertTrue(resent > 0, "nothing was sent again: " + c + " / " + s);
                assertTrue(c.shell(all) + s.shell(all) > 2L * SIZE,
                        "retransmitted bytes were read from the caller's buffers the same way: " + all);
            }
        }
    }

    /** A byte[] lives on the heap, which the kernel cannot read: it is copied once, into the send buffer. */
    @Test
    void byteArrayPayloadIsCopiedOnce() throws Exception {
        try (HomaSocket server = HomaSocket.open(config(true, 0, 1).build());
             HomaSocket client = HomaSocket.open(config(true, 0, 2).build())) {
            server.serve(r -> r.reply(new byte[0]));
            byte[] bytes = random(SIZE);
            client.call(Loopback.addressOf(server), bytes).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            HomaMetrics c = client.metrics();
            // (at least: a retransmission or a restarted request copies its bytes again)
            assertTrue(c.shell(Shell.SEND_PAYLOAD_BYTES_COPIED) >= SIZE, c.toString());
            assertEquals(0, c.shell(Shell.SEND_PAYLOAD_BYTES_IN_PLACE), c.toString());
        }
    }

    /** With the setting off the engine copies every payload byte into the send buffer, as before. */
    @Test
    void settingOffCopiesByteBufPayloads() throws Exception {
        try (HomaSocket server = HomaSocket.open(Loopback.config().mtu(20_000).zeroCopySend(false).build());
             HomaSocket client = HomaSocket.open(Loopback.config().mtu(20_000).zeroCopySend(false).build())) {
            assertTrue(!client.config().zeroCopySend());
            server.serve(r -> r.reply(r.payload()));
            byte[] bytes = random(SIZE);
            ByteBuf request = PooledByteBufAllocator.DEFAULT.directBuffer(SIZE).writeBytes(bytes);
            ByteBuf response = client.call(Loopback.addressOf(server), request).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            try {
                assertArrayEquals(bytes, ByteBufUtil.getBytes(response));
            } finally {
                response.release();
            }
            HomaMetrics c = client.metrics();
            // (at least: a retransmission or a restarted request copies its bytes again)
            assertTrue(c.shell(Shell.SEND_PAYLOAD_BYTES_COPIED) >= SIZE, c.toString());
            assertEquals(0, c.shell(Shell.SEND_PAYLOAD_BYTES_IN_PLACE), c.toString());
        }
    }
}
