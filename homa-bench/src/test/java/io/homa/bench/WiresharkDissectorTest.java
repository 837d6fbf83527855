package io.homa.bench;

import io.homa.HomaConfig;
import io.homa.HomaMetrics;
import io.homa.HomaOverloadedException;
import io.homa.HomaRequest;
import io.homa.HomaSocket;
import io.homa.testing.DatagramFaults;
import io.homa.testing.FaultInjection;
import io.homa.core.wire.DecodedPacket;
import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketDecoder;
import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import static io.homa.bench.TcpTransportTest.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The Wireshark dissector (tools/wireshark/homa.lua) decodes a real capture. An echo workload on
 * loopback makes every packet type appear through the public API (DATA in single segments and in
 * GSO batches, GRANT, RESEND with lost DATA and retransmissions, RPC_UNKNOWN(_SINCE), BUSY, CUTOFFS,
 * NEED_ACK, ACK, and OVERLOADED from a server whose handler queue is full); tcpdump captures it; hand-made malformed datagrams are sent to the server too.
 * tshark then decodes the capture with the dissector, and every frame is checked against
 * homa-core's own {@link PacketDecoder} applied to the same UDP payload: types, ids, offsets,
 * lengths, priorities, and for each malformed datagram the drop reason the receiving engine counted.
 * A second run without the port preference checks the heuristic registration.
 *
 * <p>Why tcpdump rather than a pcap written by the test: it captures what the kernel really
 * carried (IP TOS per priority level, and GSO batches as the single large datagram a capture on
 * the sending host shows), with no hook in the socket's send path. It needs root (or
 * CAP_NET_RAW); without tcpdump, tshark or the right to capture, the test is skipped and says why.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class WiresharkDissectorTest {
    private static final String HOST = "127.0.0.1";
    /** The echo server holds (never answers) a request of this length, to provoke BUSY. */
    private static final int HOLD_LENGTH = 777;
    /** The restarted server's one handler thread holds a request of this length until its caller cancels it (CANCEL). */
    private static final int GIVEN_UP_LENGTH = 666;
    /** The restarted server's one handler thread blocks on a request of this length, to provoke OVERLOADED. */
    private static final int BLOCK_LENGTH = 555;
    private static final int[] ECHO_SIZES = {0, 1, 100, 1432, 1433, 50_000, 200_000};
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final List<String> FIELDS = List.of("frame.number", "udp.srcport", "ip.dsfield", "udp.payload",
            "homa.type", "homa.id", "homa.offset", "homa.message_length", "homa.payload_length",
            "homa.resend_length", "homa.priority", "homa.flags.retransmit", "homa.ack_count",
            "homa.cutoff_version", "homa.unscheduled", "homa.gso.segments", "_ws.expert.message", "_ws.col.Info");
    /** The fields compared with what homa-core's decoder reads from the same bytes. */
    private static final List<String> DECODED = FIELDS.subList(4, 16);

    @TempDir
    Path dir;

    @Test
    void tsharkDecodesEveryPacketTypeOfARealCapture() throws Exception {
        Optional<Path> tcpdump = Tshark.executable("tcpdump");
        Optional<Path> tshark = Tshark.executable("tshark");
        assumeTrue(System.getProperty("os.name").startsWith("Linux"), "captures loopback with tcpdump: Linux only");
        assumeTrue(tcpdump.isPresent() && tshark.isPresent(),
                "tcpdump and tshark are not installed (Debian: apt-get install -y tshark tcpdump, as .ci/run does)");
        Path script = Path.of("..", "tools", "wireshark", "homa.lua").toAbsolutePath().normalize();
        assertTrue(Files.isRegularFile(script), "the dissector is missing: " + script);
        // tshark runs as nobody: the script and the capture must be readable by everyone.
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path lua = Files.copy(script, dir.resolve("homa.lua"), StandardCopyOption.REPLACE_EXISTING);
        Files.setPosixFilePermissions(lua, PosixFilePermissions.fromString("rw-r--r--"));
        Path pcap = dir.resolve("homa.pcap");

        HomaSocket serverA = HomaSocket.open(config(0).build());
        int port = serverA.localAddress().getPort();
        InetSocketAddress server = new InetSocketAddress(HOST, port);
        Traffic traffic;
        // The test's own datagrams, not Homa's: malformed ones, and the end of the capture.
        try (DatagramSocket raw = new DatagramSocket();
             PacketCapture capture = PacketCapture.start(tcpdump.get(), pcap, "udp port " + port)) {
            traffic = runWorkload(serverA, server, raw);
            // Every socket is closed; a last (non-Homa) datagram marks the end of the capture.
            byte[] end = ("XX end of capture " + System.nanoTime()).getBytes(StandardCharsets.US_ASCII);
            raw.send(new DatagramPacket(end, end.length, server));
            capture.awaitCaptured(end, WAIT);
            capture.stop();
        }
        Files.setPosixFilePermissions(pcap, PosixFilePermissions.fromString("rw-r--r--"));
        keepForDiagnosis(pcap);

        List<Tshark.Row> rows = Tshark.fields(tshark.get(), lua, pcap, List.of("homa.ports:" + port), FIELDS);
        checkEveryFrame(rows, traffic);
        checkCountsPerSocket(rows, traffic);
        checkCoverage(rows, traffic);

        // Without the port preference the heuristic alone must find every Homa datagram, and only those.
        List<Tshark.Row> heuristic = Tshark.fields(tshark.get(), lua, pcap, List.of("homa.ports:"),
                List.of("frame.number", "frame.protocols", "udp.payload", "homa.type", "homa.id"));
        checkHeuristic(rows, heuristic);
    }

    /** What the workload sent, as the sockets counted it once closed. */
    private record Traffic(int serverPort, int clientPort, int deafPort, int rawPort,
                           HomaMetrics serverA, HomaMetrics serverB, HomaMetrics client, HomaMetrics deaf,
                           int maxMessageLength,
                           Map<DropReason, Integer> malformedSent) {
    }

    private static HomaConfig.Builder config(int port) {
        // An Ethernet MTU and Linux Homa's unscheduled bytes, so that messages span many segments
        // and need grants (homa-netty's own default, 250,000, would send every echo here blind).
        return HomaConfig.builder().bindAddress(new InetSocketAddress(HOST, port)).mtu(1500).unscheduledBytes(40_000);
    }

    private Traffic runWorkload(HomaSocket serverA, InetSocketAddress server, DatagramSocket raw) throws Exception {
        CompletableFuture<HomaRequest> held = new CompletableFuture<>();
        serverA.serve(request -> {
            if (request.length() == HOLD_LENGTH) {
                held.complete(request); // never answered: the client's RESENDs get BUSY
            } else {
                request.reply(request.toByteArray());
            }
        });
        Map<DropReason, Integer> malformed;
        int maxMessageLength = serverA.config().maxMessageLength();
        // The client loses 5% of its DATA (seeded): the server asks for it with RESEND.
        HomaSocket clientSocket = HomaSocket.open(FaultInjection.inject(config(0), 14,
                new DatagramFaults(0.05, 0, 0, Duration.ZERO), DatagramFaults.NONE).build());
        // This one loses every control packet it sends, its ACKs too: the server asks with NEED_ACK.
        HomaSocket deafSocket = HomaSocket.open(FaultInjection.inject(config(0), 15,
                DatagramFaults.NONE, new DatagramFaults(1, 0, 0, Duration.ZERO)).build());
        HomaSocket serverB = null;
        try {
            // DATA of one and of many segments (GSO batches from the server), GRANTs, CUTOFFS.
            for (int size : ECHO_SIZES) {
                byte[] request = random(size, size);
                assertArrayEquals(request, clientSocket.call(server, request).get(WAIT.toSeconds(), TimeUnit.SECONDS),
                        "echo of " + size + " bytes");
            }
            byte[] small = random(100, 7);
            assertArrayEquals(small, deafSocket.call(server, small).get(WAIT.toSeconds(), TimeUnit.SECONDS));
            await(() -> serverA.metrics().packetsSent("NEED_ACK") > 0, () -> "NEED_ACK " + serverA.metrics());

            // A request the server sits on: the client asks for its response, the server says BUSY.
            byte[] holdRequest = random(HOLD_LENGTH, 8);
            long busyBefore = serverA.metrics().packetsSent("BUSY");
            // Idempotent: after the restart below it is sent again, though the old server had it.
            CompletableFuture<byte[]> heldCall = clientSocket.call(server, holdRequest,
                    io.homa.CallOptions.DEFAULT.withIdempotent(true));
            await(() -> held.isDone() && serverA.metrics().packetsSent("BUSY") > busyBefore,
                    () -> "BUSY " + serverA.metrics());

            malformed = sendMalformed(raw, server, maxMessageLength);
            await(() -> malformed.entrySet().stream().allMatch(m -> serverA.metrics().drops(m.getKey().name()) == m.getValue()),
                    () -> "drops of the malformed datagrams " + malformed + ": " + serverA.metrics());

            // The server restarts on the same port without the held request: the client's next
            // RESEND gets RPC_UNKNOWN_SINCE, it sends the (idempotent) request again and the new
            // server echoes it. A RESEND without the flag that asks for the uptime (the raw
            // socket's, as an older peer's) gets plain RPC_UNKNOWN.
            serverA.close();
            // One handler thread and room for one waiting request: a request that finds the thread
            // blocked and one waiting is refused unrun, with OVERLOADED.
            serverB = HomaSocket.open(config(server.getPort()).executorThreads(1).maxQueuedRequests(1).build());
            CountDownLatch unblock = new CountDownLatch(1);
            CountDownLatch givenUpArrived = new CountDownLatch(1);
            CountDownLatch givenUpRelease = new CountDownLatch(1);
            serverB.serve(request -> {
                if (request.length() == GIVEN_UP_LENGTH) { // holds the thread until its caller gave up
                    givenUpArrived.countDown();
                    try {
                        givenUpRelease.await(WAIT.toSeconds(), TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                if (request.length() == BLOCK_LENGTH) {
                    try {
                        unblock.await(WAIT.toSeconds(), TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                request.reply(request.toByteArray());
            });
            assertArrayEquals(holdRequest, heldCall.get(WAIT.toSeconds(), TimeUnit.SECONDS), "the restarted call");
            java.nio.ByteBuffer flagless = java.nio.ByteBuffer.allocate(io.homa.core.wire.WireFormat.RESEND_LENGTH);
            io.homa.core.wire.PacketEncoder.resend(flagless, 0x5EED0L, 0, -1, 7);
            raw.send(new DatagramPacket(flagless.array(), flagless.array().length, server));
            HomaSocket b0 = serverB;
            await(() -> b0.metrics().packetsSent("RPC_UNKNOWN_SINCE") > 0 && b0.metrics().packetsSent("RPC_UNKNOWN") > 0
                    && b0.metrics().packetsReceived("ACK") > 0, () -> "RPC_UNKNOWN(_SINCE) and ACK " + b0.metrics());

            // A call given up while its handler runs: the client tells the server with CANCEL.
            CompletableFuture<byte[]> givenUp = clientSocket.call(server, random(GIVEN_UP_LENGTH, 30));
            assertTrue(givenUpArrived.await(WAIT.toSeconds(), TimeUnit.SECONDS), "the call to give up reached its handler");
            givenUp.cancel(true);
            await(() -> b0.metrics().packetsReceived("CANCEL") > 0, () -> "CANCEL " + b0.metrics());
            givenUpRelease.countDown();

            // Three requests for one blocked handler thread and one place in the queue: at least one is refused.
            List<CompletableFuture<byte[]>> blocked = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                blocked.add(clientSocket.call(server, random(BLOCK_LENGTH, 20 + i)));
            }
            await(() -> b0.metrics().packetsSent("OVERLOADED") > 0, () -> "OVERLOADED " + b0.metrics());
            unblock.countDown();
            int overloaded = 0;
            for (CompletableFuture<byte[]> call : blocked) {
                try {
                    assertEquals(BLOCK_LENGTH, call.get(WAIT.toSeconds(), TimeUnit.SECONDS).length);
                } catch (ExecutionException e) {
                    assertInstanceOf(HomaOverloadedException.class, e.getCause());
                    overloaded++;
                }
            }
            assertTrue(overloaded >= 1, "a call was refused as overloaded");
        } finally {
            clientSocket.close();
            deafSocket.close();
            serverA.close();
            if (serverB != null) {
                serverB.close();
            }
        }
        // After close, metrics() returns the final counts: nothing more is sent.
        return new Traffic(server.getPort(), clientSocket.localAddress().getPort(), deafSocket.localAddress().getPort(),
                raw.getLocalPort(), serverA.metrics(), serverB.metrics(), clientSocket.metrics(), deafSocket.metrics(),
                maxMessageLength, malformed);
    }

    /** Sends one datagram for each check of the decoder; returns how many of each drop reason. */
    private static Map<DropReason, Integer> sendMalformed(DatagramSocket raw, InetSocketAddress to, int maxMessageLength)
            throws IOException {
        Map<DropReason, Integer> sent = new EnumMap<>(DropReason.class);
        List<Map.Entry<DropReason, byte[]>> bad = new ArrayList<>();
        bad.add(Map.entry(DropReason.TOO_SHORT, new byte[] {0x48, 0x4D, 1, 0x10, 0}));
        bad.add(Map.entry(DropReason.BAD_MAGIC, "XY not Homa!".getBytes(StandardCharsets.US_ASCII)));
        byte[] v2 = packet(b -> PacketEncoder.grant(b, 42, 1000, 3));
        v2[WireFormat.OFF_VERSION] = 1; // version 1 had no DATA segment length
        bad.add(Map.entry(DropReason.BAD_VERSION, v2));
        byte[] freeze = packet(b -> PacketEncoder.bare(b, PacketType.BUSY, 42));
        freeze[WireFormat.OFF_TYPE] = 0x16;
        bad.add(Map.entry(DropReason.UNKNOWN_TYPE, freeze));
        bad.add(Map.entry(DropReason.BAD_ID, packet(b -> PacketEncoder.bare(b, PacketType.BUSY, 1))));
        // (A GRANT with bytes after it would be a coalesced datagram of a GRANT and a short last segment.)
        bad.add(Map.entry(DropReason.BAD_LENGTH, Arrays.copyOf(packet(b -> PacketEncoder.grant(b, 42, 1000, 3)), 18)));
        bad.add(Map.entry(DropReason.BAD_LENGTH, Arrays.copyOf(data(42, 100, 0, 0, 100), 30)));
        bad.add(Map.entry(DropReason.BAD_LENGTH, packet(b -> PacketEncoder.resend(b, 42, 0, -2, 3))));
        bad.add(Map.entry(DropReason.MESSAGE_TOO_LONG, data(42, maxMessageLength + 1, 1, 0, 1)));
        bad.add(Map.entry(DropReason.BEYOND_MESSAGE, data(42, 10, 10, 5, 10)));
        bad.add(Map.entry(DropReason.EMPTY_SEGMENT, data(42, 100, 100, 0, 0)));
        byte[] flags = data(42, 100, 100, 0, 100);
        flags[WireFormat.DATA_OFF_FLAGS] = 0x02;
        bad.add(Map.entry(DropReason.BAD_FLAGS, flags));
        byte[] twoFaults = data(42, 10, 10, 5, 10);
        twoFaults[WireFormat.DATA_OFF_FLAGS] = 0x02; // the receiver counts only the first check that fails
        bad.add(Map.entry(DropReason.BEYOND_MESSAGE, twoFaults));
        bad.add(Map.entry(DropReason.BAD_ID, data(42, 100, 100, 0, 100, 43)));
        bad.add(Map.entry(DropReason.BAD_PRIORITY, packet(b -> PacketEncoder.resend(b, 42, 0, 100, 9))));
        byte[] sixAcks = new byte[WireFormat.ACK_OFF_ENTRIES + 6 * WireFormat.ACK_ENTRY];
        ByteBuffer five = ByteBuffer.wrap(sixAcks);
        PacketEncoder.ack(five, 42, new long[] {42, 44, 46, 48, 50}, new int[5], 5);
        sixAcks[WireFormat.ACK_OFF_COUNT] = 6;
        bad.add(Map.entry(DropReason.BAD_ACK_COUNT, sixAcks));
        bad.add(Map.entry(DropReason.BAD_ID, packet(b -> PacketEncoder.ack(b, 42, new long[] {42, 45}, new int[2], 2))));
        bad.add(Map.entry(DropReason.BAD_CUTOFFS, packet(b -> PacketEncoder.cutoffs(b, 42, new int[8], 0, 0))));
        for (Map.Entry<DropReason, byte[]> m : bad) {
            raw.send(new DatagramPacket(m.getValue(), m.getValue().length, to));
            sent.merge(m.getKey(), 1, Integer::sum);
        }
        return sent;
    }

    private interface Encoder {
        int write(ByteBuffer b);
    }

    private static byte[] packet(Encoder encoder) {
        ByteBuffer b = ByteBuffer.allocate(128);
        return Arrays.copyOf(b.array(), encoder.write(b));
    }

    private static byte[] data(long id, int messageLength, int incoming, int offset, int payload) {
        return data(id, messageLength, incoming, offset, payload, 0);
    }

    private static byte[] data(long id, int messageLength, int incoming, int offset, int payload, long ackId) {
        ByteBuffer b = ByteBuffer.allocate(WireFormat.DATA_HEADER + payload);
        PacketEncoder.data(b, id, messageLength, incoming, offset, 0, false, ackId, 0, ByteBuffer.allocate(payload), 0, payload);
        return b.array();
    }

    /** Every frame: the dissector's fields equal what homa-core's decoder reads from the same bytes. */
    private static void checkEveryFrame(List<Tshark.Row> rows, Traffic t) {
        assertFalse(rows.isEmpty(), "tshark decoded no frame");
        Map<DropReason, Integer> malformedSeen = new EnumMap<>(DropReason.class);
        for (Tshark.Row row : rows) {
            String frame = "frame " + row.one("frame.number") + " " + row.fields();
            byte[] payload = HexFormat.of().parseHex(row.one("udp.payload"));
            int tos = Integer.decode(row.one("ip.dsfield"));
            List<String> experts = row.all("_ws.expert.message");
            Map<String, List<String>> expected = new LinkedHashMap<>();
            DECODED.forEach(f -> expected.put(f, new ArrayList<>()));
            DropReason reason = null;
            // A datagram longer than its first packet is a GSO batch (of one message's segments, or
            // of equal-size packets of several RPCs batched in one send): every packet is as long as
            // the first but the last, the stride the dissector and the GRO receive path use.
            int first = PacketDecoder.packetLength(ByteBuffer.wrap(payload), 0, payload.length);
            int stride = first > 0 && first < payload.length ? first : payload.length;
            int segments = 0;
            for (int at = 0; at < payload.length; at += stride) {
                ByteBuffer segment = ByteBuffer.wrap(payload, at, Math.min(stride, payload.length - at)).slice();
                DecodedPacket p = new DecodedPacket();
                reason = PacketDecoder.decode(segment, t.maxMessageLength(), p);
                if (reason != null) {
                    break;
                }
                segments++;
                expect(expected, p, tos >> 5);
            }
            if (reason != null) {
                assertEquals(0, segments, "a malformed datagram in a GSO batch: " + frame);
                // Exactly one expert message names the drop reason: the decoder's first failed check.
                List<String> dropped = experts.stream().filter(m -> m.contains("[dropped: ")).toList();
                assertEquals(1, dropped.size(), "one drop reason: " + frame);
                assertTrue(dropped.get(0).endsWith("[dropped: " + reason + "]"), reason + " expected: " + frame);
                assertEquals(t.rawPort(), Integer.parseInt(row.one("udp.srcport")),
                        "only the test's raw socket sends malformed datagrams: " + frame);
                malformedSeen.merge(reason, 1, Integer::sum);
                continue;
            }
            assertTrue(experts.stream().noneMatch(m -> m.contains("[dropped: ")), "no drop in a valid packet: " + frame);
            if (segments > 1) {
                expected.get("homa.gso.segments").add(Integer.toString(segments));
            }
            for (String field : DECODED) {
                assertEquals(expected.get(field), row.all(field), field + " of " + frame);
            }
        }
        Map<DropReason, Integer> malformedSent = new EnumMap<>(t.malformedSent());
        malformedSent.merge(DropReason.BAD_MAGIC, 1, Integer::sum); // the end marker
        assertEquals(malformedSent, malformedSeen, "each malformed datagram flagged with its drop reason");
        for (Map.Entry<DropReason, Integer> m : t.malformedSent().entrySet()) {
            assertEquals(m.getValue().longValue(), t.serverA().drops(m.getKey().name()), "server drops " + m.getKey());
        }
    }

    /** The fields the dissector shows for one valid packet, as tshark prints them. */
    private static void expect(Map<String, List<String>> e, DecodedPacket p, int tosLevel) {
        e.get("homa.type").add(String.format("0x%02x", p.type.code));
        e.get("homa.id").add(Long.toUnsignedString(p.senderId));
        switch (p.type) {
            case DATA -> {
                e.get("homa.offset").add(Integer.toString(p.offset));
                e.get("homa.message_length").add(Integer.toString(p.messageLength));
                e.get("homa.payload_length").add(Integer.toString(p.payloadLength));
                e.get("homa.priority").add(Integer.toString(tosLevel));
                e.get("homa.flags.retransmit").add(p.retransmit ? "1" : "0");
                e.get("homa.cutoff_version").add(Integer.toString(p.cutoffVersion));
            }
            case GRANT -> {
                e.get("homa.offset").add(Integer.toString(p.grantOrResendOffset));
                e.get("homa.priority").add(Integer.toString(p.priority));
            }
            case RESEND -> {
                e.get("homa.offset").add(Integer.toString(p.grantOrResendOffset));
                e.get("homa.resend_length").add(Integer.toString(p.resendLength));
                e.get("homa.priority").add(Integer.toString(p.priority));
            }
            case CUTOFFS -> {
                e.get("homa.cutoff_version").add(Integer.toString(p.cutoffVersion));
                e.get("homa.unscheduled").add(Integer.toString(p.unscheduledUnits * WireFormat.UNSCHEDULED_UNIT));
            }
            case ACK -> e.get("homa.ack_count").add(Integer.toString(p.ackCount));
            default -> {
            }
        }
    }

    /** Which packets of a socket its fault injector drops. */
    private enum Lossy { NOTHING, DATA, CONTROL }

    /** Per socket and type, the capture holds what the socket sent, less what fault injection dropped. */
    private static void checkCountsPerSocket(List<Tshark.Row> rows, Traffic t) {
        checkCounts(rows, t.serverPort(), "servers", Lossy.NOTHING, t.serverA(), t.serverB());
        checkCounts(rows, t.clientPort(), "client", Lossy.DATA, t.client());
        checkCounts(rows, t.deafPort(), "deaf client", Lossy.CONTROL, t.deaf());
    }

    private static void checkCounts(List<Tshark.Row> rows, int port, String who, Lossy lossy, HomaMetrics... sockets) {
        Map<PacketType, Long> captured = new EnumMap<>(PacketType.class);
        for (Tshark.Row row : rows) {
            if (Integer.parseInt(row.one("udp.srcport")) == port) {
                for (String type : row.all("homa.type")) {
                    captured.merge(PacketType.fromCode(Integer.decode(type)), 1L, Long::sum);
                }
            }
        }
        String context = who + " " + Arrays.toString(sockets) + ", captured " + captured;
        long lossySent = 0;
        long lossyCaptured = 0;
        for (PacketType type : PacketType.values()) {
            long sent = Arrays.stream(sockets).mapToLong(m -> m.packetsSent(type.name())).sum();
            long got = captured.getOrDefault(type, 0L);
            boolean dropped = lossy == (type == PacketType.DATA ? Lossy.DATA : Lossy.CONTROL);
            if (dropped) {
                lossySent += sent;
                lossyCaptured += got;
            } else {
                assertEquals(sent, got, type + " sent and captured, " + context);
            }
        }
        long faultDrops = Arrays.stream(sockets).mapToLong(m -> m.shell(HomaMetrics.Shell.FAULTS_DROPPED)).sum();
        assertEquals(lossySent - faultDrops, lossyCaptured, "sent less dropped and captured, " + context);
    }

    /** Every packet type, multi-segment messages, GSO batches and retransmissions were seen. */
    private static void checkCoverage(List<Tshark.Row> rows, Traffic t) {
        Map<PacketType, Integer> types = new EnumMap<>(PacketType.class);
        boolean multiSegment = false;
        boolean gso = false;
        boolean retransmission = false;
        for (Tshark.Row row : rows) {
            if (Integer.parseInt(row.one("udp.srcport")) == t.rawPort()) {
                continue; // the test's malformed datagrams
            }
            for (String type : row.all("homa.type")) {
                types.merge(PacketType.fromCode(Integer.decode(type)), 1, Integer::sum);
            }
            List<String> lengths = row.all("homa.message_length");
            List<String> payloads = row.all("homa.payload_length");
            for (int i = 0; i < lengths.size() && i < payloads.size(); i++) {
                multiSegment |= Long.parseLong(lengths.get(i)) > Long.parseLong(payloads.get(i));
            }
            gso |= !row.all("homa.gso.segments").isEmpty();
            retransmission |= row.all("homa.flags.retransmit").contains("1");
        }
        assertEquals(Arrays.asList(PacketType.values()), new ArrayList<>(types.keySet()), "every packet type in " + types);
        assertTrue(multiSegment, "a message of several segments");
        assertTrue(t.client().shell(HomaMetrics.Shell.FAULTS_DROPPED) > 0 && retransmission,
                "lost DATA and its retransmission");
        if (t.serverA().shell(HomaMetrics.Shell.GSO_SENDS) > 0) {
            assertTrue(gso, "the server sent GSO batches; the capture shows them as one datagram each");
        }
    }

    /** With no port registered, the heuristic decodes exactly the datagrams with Homa's magic and version. */
    private static void checkHeuristic(List<Tshark.Row> byPort, List<Tshark.Row> byHeuristic) {
        assertEquals(byPort.size(), byHeuristic.size());
        for (int i = 0; i < byPort.size(); i++) {
            Tshark.Row port = byPort.get(i);
            Tshark.Row heur = byHeuristic.get(i);
            byte[] payload = HexFormat.of().parseHex(heur.one("udp.payload"));
            boolean homa = payload.length >= WireFormat.COMMON_HEADER && payload[0] == 0x48 && payload[1] == 0x4D
                    && payload[2] == WireFormat.VERSION;
            String frame = "frame " + heur.one("frame.number") + " " + heur.fields();
            assertEquals(homa, heur.one("frame.protocols").endsWith(":homa"), "decoded as Homa if and only if Homa: " + frame);
            if (homa) {
                assertEquals(port.all("homa.type"), heur.all("homa.type"), frame);
                assertEquals(port.all("homa.id"), heur.all("homa.id"), frame);
            }
        }
    }

    /** Keeps the capture in the module's target directory, to open in Wireshark after a failure. */
    private static void keepForDiagnosis(Path pcap) throws IOException {
        Path target = Path.of("target", "wireshark");
        Files.createDirectories(target);
        Files.copy(pcap, target.resolve("homa-echo.pcap"), StandardCopyOption.REPLACE_EXISTING);
    }

    private static void await(BooleanSupplier condition, Supplier<String> what) {
        long giveUp = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - giveUp > 0) {
                fail("not reached within " + WAIT + ": " + what.get());
            }
            LockSupport.parkNanos(2_000_000);
        }
    }

}
