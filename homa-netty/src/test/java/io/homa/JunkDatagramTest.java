package io.homa;

import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Junk sent to a real socket with several engines on one port: with SO_REUSEPORT the shell reads
 * a datagram's sender id to route it to the engine that owns its RPC before the engine validates
 * anything. Random datagrams (empty up to 1,500 bytes), every packet type cut short (its sender
 * id odd or even, so that some are routed to another loop), and forged OVERLOADED packets from 8
 * source ports: every one is dropped and counted (by the engine or by the shell), none
 * is thrown (no I/O error, nothing escapes an event loop), and the socket goes on serving.
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class JunkDatagramTest {
    private static final int SENDERS = 8;
    private static final int BATCHES = 20;
    private static final int PER_BATCH = 500;

    @Test
    void randomAndTruncatedDatagramsAreDroppedAndCounted_neverThrown() throws Exception {
        SplittableRandom random = new SplittableRandom(17);
        List<DatagramChannel> senders = new ArrayList<>();
        try (HomaSocket server = HomaSocket.open(Loopback.config().eventLoops(4).build());
             HomaSocket client = HomaSocket.open(Loopback.config().build())) {
            server.serve(r -> r.reply(r.toByteArray()));
            InetSocketAddress to = Loopback.addressOf(server);
            for (int i = 0; i < SENDERS; i++) {
                DatagramChannel ch = DatagramChannel.open();
                ch.bind(new InetSocketAddress(Loopback.HOST, 0));
                senders.add(ch);
            }
            long sent = 0;
            for (int batch = 0; batch < BATCHES; batch++) {
                for (int i = 0; i < PER_BATCH; i++) {
                    senders.get(random.nextInt(SENDERS)).send(junk(random), to);
                    sent++;
                }
                // Paced, so that the kernel's receive buffer never drops any: all must be counted.
                long expected = sent;
                Loopback.await(Duration.ofSeconds(20),
                        () -> server.metrics().shell(HomaMetrics.Shell.DATAGRAMS_RECEIVED) >= expected,
                        () -> "sent " + expected + ", " + server.metrics());
            }
            HomaMetrics m = server.metrics();
            assertEquals(sent, m.shell(HomaMetrics.Shell.DATAGRAMS_RECEIVED), m.toString());
            assertEquals(sent, m.droppedPackets() + m.shell(HomaMetrics.Shell.DATAGRAMS_DROPPED),
                    "every junk datagram is dropped and counted: " + m);
            assertEquals(0, m.shell(HomaMetrics.Shell.IO_ERRORS), "something was thrown: " + m);
            assertEquals(0, m.shell(HomaMetrics.Shell.REQUESTS_HANDLED), m.toString());
            assertEquals(0, m.activeRpcs(), m.toString());
            for (int i = 0; i < 50; i++) { // still serving, on every loop
                byte[] req = new byte[1 + i * 100];
                random.nextBytes(req);
                assertArrayEquals(req, client.call(to, req).get(30, TimeUnit.SECONDS));
            }
            assertEquals(0, server.metrics().shell(HomaMetrics.Shell.IO_ERRORS));
        } finally {
            for (DatagramChannel ch : senders) {
                ch.close();
            }
        }
    }

    /** One junk datagram: random bytes, a packet of some type cut short, or a forged OVERLOADED packet. */
    private static ByteBuffer junk(SplittableRandom random) {
        ByteBuffer b = ByteBuffer.allocate(2_000);
        long id = random.nextLong();
        switch (random.nextInt(3)) {
            case 0 -> {
                byte[] bytes = new byte[random.nextInt(1_501)];
                random.nextBytes(bytes);
                return ByteBuffer.wrap(bytes);
            }
            case 1 -> {
                int full = switch (random.nextInt(7)) {
                    case 0 -> PacketEncoder.data(b, id, 100_000, 40_000, 0, 1, false, 0, 0,
                            ByteBuffer.allocate(1_000), 0, 1_000);
                    case 1 -> PacketEncoder.grant(b, id, 50_000, 3);
                    case 2 -> PacketEncoder.resend(b, id, 0, 1_000, 2);
                    case 3 -> PacketEncoder.bare(b, PacketType.RPC_UNKNOWN, id);
                    case 4 -> PacketEncoder.bare(b, PacketType.NEED_ACK, id);
                    case 5 -> PacketEncoder.cutoffs(b, id, new int[]{8, 7, 6, 5, 4, 3, 2, 1}, 2, 0);
                    default -> PacketEncoder.ack(b, id, new long[]{id, id + 2}, new int[]{1, 2}, 2);
                };
                // Cut inside the header (a DATA packet cut after it would be a valid shorter one).
                int header = Math.min(full, WireFormat.DATA_HEADER);
                b.flip().limit(random.nextInt(header));
                return b;
            }
            default -> {
                PacketEncoder.bare(b, PacketType.OVERLOADED, id | 1); // names no call of the server's
                return b.flip();
            }
        }
    }
}
