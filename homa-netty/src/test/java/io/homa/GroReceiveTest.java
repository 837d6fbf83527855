package io.homa;

import io.homa.GroBatches.Batch;
import io.homa.GroBatches.Case;
import io.netty.channel.epoll.EpollDatagramChannel;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * UDP GRO on real sockets (epoll, the default {@code gro(true)}): a GSO send of many segments
 * reaches the receiving socket as one datagram, which the engine walks segment by segment. On
 * loopback at {@code mtu(1500)}, and across a veth pair between two network namespaces (as root:
 * CI is), hand-made batches check that one message, several messages and RPCs, a missing segment,
 * a hostile segment in the middle and a truncated last segment each do what they must: every
 * good segment is taken, a bad one is dropped and counted alone, and the follow-up completes the
 * request. The leak detector (PARANOID, {@link LeakCheck}) checks every buffer is released.
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class GroReceiveTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String NAMESPACE = "homa-gro-" + ProcessHandle.current().pid();
    private static final String LINK = "hg" + (ProcessHandle.current().pid() % 100_000);
    private static final String HOST_IP = "10.211.0.1";
    private static final String PEER_IP = "10.211.0.2";
    private static boolean vethUp;

    private static void assumeGso() {
        assumeTrue(Loopback.expectedTransport().equals("epoll"), "UDP GRO is read on epoll only");
        assumeTrue(EpollDatagramChannel.isSegmentedDatagramPacketSupported(), "this kernel has no UDP GSO");
    }

    @Test
    void gsoSendOfAMegabyte_reachesTheGroSocketWhole() throws Exception {
        assumeGso();
        HomaConfig config = Loopback.config().mtu(1_500).build();
        assertTrue(config.gro(), "GRO is on by default");
        try (HomaSocket server = HomaSocket.open(config); HomaSocket client = HomaSocket.open(config)) {
            server.serve(r -> r.reply(r.payload()));
            byte[] request = new byte[1_000_000];
            new Random(1).nextBytes(request);
            byte[] reply = client.call(Loopback.addressOf(server), request).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertArrayEquals(request, reply);
            for (HomaSocket s : new HomaSocket[]{server, client}) {
                HomaMetrics m = s.metrics();
                long datagrams = m.shell(HomaMetrics.Shell.DATAGRAMS_RECEIVED);
                long data = m.packetsReceived("DATA");
                assertTrue(m.counter("COALESCED_DATAGRAMS") > 0, "coalesced datagrams: " + m);
                assertTrue(data > 2 * datagrams, data + " DATA packets arrived in " + datagrams + " datagrams: " + m);
                assertEquals(0, m.droppedPackets(), m.toString());
            }
        }
    }

    @Test
    void groOff_everySegmentIsADatagram() throws Exception {
        assumeGso();
        HomaConfig config = Loopback.config().mtu(1_500).gro(false).build();
        try (HomaSocket server = HomaSocket.open(config); HomaSocket client = HomaSocket.open(config)) {
            server.serve(r -> r.reply(r.payload()));
            byte[] request = new byte[200_000];
            assertArrayEquals(request, client.call(Loopback.addressOf(server), request).get(WAIT.toSeconds(), TimeUnit.SECONDS));
            assertEquals(0, server.metrics().counter("COALESCED_DATAGRAMS"), server.metrics().toString());
        }
    }

    @ParameterizedTest
    @EnumSource(Case.class)
    void batchOnLoopback(Case c) throws Exception {
        assumeGso();
        try (HomaSocket server = HomaSocket.open(Loopback.config().mtu(1_500).build());
             GroBatches.Sender sender = new GroBatches.Sender(new InetSocketAddress(Loopback.HOST, 0))) {
            Map<Long, byte[]> served = serve(server);
            InetSocketAddress to = Loopback.addressOf(server);
            Batch b = GroBatches.batch(c);
            sender.sendBatch(b, to);
            check(c, server, served, b, () -> sender.sendFollowUp(b, to));
        }
    }

    @ParameterizedTest
    @EnumSource(Case.class)
    void batchAcrossAVethPair(Case c) throws Exception {
        assumeGso();
        assumeVeth();
        try (HomaSocket server = HomaSocket.open(HomaConfig.builder()
                .bindAddress(new InetSocketAddress(HOST_IP, 0)).mtu(1_500).build())) {
            Map<Long, byte[]> served = serve(server);
            Path log = Files.createTempFile("homa-gro", ".log");
            Process child = startSender(c, server.localAddress().getPort(), log);
            try {
                BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
                Writer in = new OutputStreamWriter(child.getOutputStream(), StandardCharsets.UTF_8);
                assertEquals("SENT", out.readLine(), () -> "the sender's log: " + read(log));
                check(c, server, served, GroBatches.batch(c), () -> {
                    try {
                        in.write("next\n");
                        in.flush();
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
                assertEquals("DONE", out.readLine(), () -> "the sender's log: " + read(log));
            } finally {
                child.destroy();
                if (!child.waitFor(10, TimeUnit.SECONDS)) {
                    child.destroyForcibly();
                }
                Files.deleteIfExists(log);
            }
        }
    }

    /**
     * One coalesced datagram with the responses to two calls that two event loops started: the
     * loop that reads it splits it, and each response reaches the engine that owns its RPC (the
     * other loop's would otherwise answer RPC_UNKNOWN). The "server" is a raw epoll channel that
     * learns the calls' ids from their requests and answers both in one GSO send.
     */
    @Test
    void coalescedResponsesForRpcsOfTwoLoops_eachCompletes() throws Exception {
        assumeGso();
        java.util.concurrent.BlockingQueue<Long> ids = new java.util.concurrent.LinkedBlockingQueue<>();
        try (GroBatches.Sender raw = new GroBatches.Sender(new InetSocketAddress(Loopback.HOST, 0), p -> {
                 java.nio.ByteBuffer b = p.content().nioBuffer();
                 if (b.remaining() >= io.homa.core.wire.WireFormat.DATA_HEADER
                         && b.get(b.position() + io.homa.core.wire.WireFormat.OFF_TYPE) == 0x10) {
                     ids.add(b.getLong(b.position() + io.homa.core.wire.WireFormat.OFF_SENDER_ID));
                 }
             });
             HomaSocket client = HomaSocket.open(Loopback.config().mtu(1_500).eventLoops(2).build())) {
            InetSocketAddress server = raw.localAddress();
            var first = client.call(server, new byte[100]);
            var second = client.call(server, new byte[100]);
            long a = ids.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
            long b = ids.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
            while (b == a) { // a retransmitted request
                b = ids.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
            assertTrue(io.homa.core.RpcIds.shard(a, 2) != io.homa.core.RpcIds.shard(b, 2),
                    "the two calls run on the two loops: " + a + ", " + b);
            byte[] both = new byte[2 * GroBatches.STRIDE];
            System.arraycopy(GroBatches.segment(a ^ 1, GroBatches.SEGMENT, 0), 0, both, 0, GroBatches.STRIDE);
            System.arraycopy(GroBatches.segment(b ^ 1, GroBatches.SEGMENT, 0), 0, both, GroBatches.STRIDE, GroBatches.STRIDE);
            raw.sendBatch(new Batch(both, null), Loopback.addressOf(client));
            byte[] one = first.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            byte[] two = second.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            long idOfFirst = one[0] == GroBatches.payloadByte(a ^ 1, 0) ? a : b;
            assertArrayEquals(GroBatches.payload(idOfFirst ^ 1, GroBatches.SEGMENT), one);
            assertArrayEquals(GroBatches.payload((idOfFirst == a ? b : a) ^ 1, GroBatches.SEGMENT), two);
            assertEquals(0, client.metrics().drops("UNKNOWN_RPC"), client.metrics().toString());
        }
    }

    /** Serves every request with an empty reply, recording its bytes by client RPC id. */
    private static Map<Long, byte[]> serve(HomaSocket server) {
        Map<Long, byte[]> served = new ConcurrentHashMap<>();
        server.serve(r -> {
            byte[] bytes = r.toByteArray();
            served.put(idOf(bytes), bytes);
            r.reply(new byte[0]);
        });
        return served;
    }

    /** What the batch must have done at the server, then the follow-up's completion. */
    private static void check(Case c, HomaSocket server, Map<Long, byte[]> served, Batch b, Runnable followUp) {
        int segments = segmentsOf(b);
        HomaMetrics m0 = awaitData(server, c == Case.HOSTILE_SEGMENT || c == Case.TRUNCATED_LAST ? segments - 1 : segments);
        assertTrue(m0.counter("COALESCED_DATAGRAMS") >= 1, "the batch arrived as one datagram: " + m0);
        switch (c) {
            case ONE_MESSAGE, SEVERAL_MESSAGES -> {
                Loopback.await(WAIT, () -> served.size() == c.requests, () -> "served " + served.keySet());
                assertEquals(0, server.metrics().droppedPackets(), server.metrics().toString());
            }
            case SEGMENT_MISSING -> assertEquals(0, m0.droppedPackets(), m0.toString());
            case HOSTILE_SEGMENT -> assertEquals(1, m0.drops("BAD_FLAGS"), m0.toString());
            case TRUNCATED_LAST -> assertEquals(1, m0.drops("BAD_LENGTH"), m0.toString());
        }
        if (b.followUp() != null) {
            assertEquals(0, served.size(), "incomplete until the follow-up");
            followUp.run();
            Loopback.await(WAIT, () -> served.size() == c.requests, () -> "served " + served.keySet() + " " + server.metrics());
        }
        for (byte[] request : served.values()) {
            long id = idOf(request);
            assertArrayEquals(GroBatches.payload(id, request.length), request, "request " + id + " intact");
        }
    }

    /** The request id whose payload this is (the ids of the cases are distinct in their first byte). */
    private static long idOf(byte[] request) {
        for (long id = 2; id < 64; id += 2) {
            if (GroBatches.payloadByte(id, 0) == request[0] && GroBatches.payloadByte(id, 1) == request[1]) {
                return id;
            }
        }
        throw new AssertionError("no case's request starts with " + request[0]);
    }

    private static int segmentsOf(Batch b) {
        return (b.segments().length + GroBatches.STRIDE - 1) / GroBatches.STRIDE;
    }

    private static HomaMetrics awaitData(HomaSocket server, int packets) {
        Loopback.await(WAIT, () -> server.metrics().packetsReceived("DATA") >= packets,
                () -> "expected " + packets + " DATA packets: " + server.metrics());
        HomaMetrics m = server.metrics();
        assertEquals(packets, m.packetsReceived("DATA"), m.toString());
        return m;
    }

    // ------------------------------------------------------------------ the veth pair

    /** Creates the namespace and the veth pair once (as root), or skips saying why. */
    private static synchronized void assumeVeth() throws Exception {
        if (vethUp) {
            return;
        }
        assumeTrue(System.getProperty("os.name").startsWith("Linux"), "network namespaces are Linux only");
        assumeTrue(SystemCommands.run("id", "-u").trim().equals("0"), "needs root to create a network namespace and a veth pair");
        assumeTrue(SystemCommands.onPath("ip"), "the ip command (iproute2) is not installed");
        assumeTrue(SystemCommands.exec("ip", "netns", "add", NAMESPACE) == 0, "cannot create network namespace " + NAMESPACE);
        vethUp = true; // from here on, @AfterAll removes what exists
        String peer = LINK + "b";
        assertEquals(0, SystemCommands.exec("ip", "link", "add", LINK + "a", "mtu", "1500", "type", "veth", "peer", "name", peer,
                "mtu", "1500"), "cannot create a veth pair");
        assertEquals(0, SystemCommands.exec("ip", "link", "set", peer, "netns", NAMESPACE));
        assertEquals(0, SystemCommands.exec("ip", "addr", "add", HOST_IP + "/24", "dev", LINK + "a"));
        assertEquals(0, SystemCommands.exec("ip", "link", "set", LINK + "a", "up"));
        assertEquals(0, SystemCommands.exec("ip", "netns", "exec", NAMESPACE, "ip", "addr", "add", PEER_IP + "/24", "dev", peer));
        assertEquals(0, SystemCommands.exec("ip", "netns", "exec", NAMESPACE, "ip", "link", "set", peer, "up"));
        assertEquals(0, SystemCommands.exec("ip", "netns", "exec", NAMESPACE, "ip", "link", "set", "lo", "up"));
    }

    @AfterAll
    static void removeVeth() throws Exception {
        if (vethUp) {
            SystemCommands.exec("ip", "link", "del", LINK + "a"); // takes its peer along
            SystemCommands.exec("ip", "netns", "del", NAMESPACE);
        }
    }

    /** The sender JVM in the namespace, on the test's own class path (and module path, flattened). */
    private static Process startSender(Case c, int port, Path log) throws IOException {
        List<String> cmd = List.of("ip", "netns", "exec", NAMESPACE, SystemCommands.java(), "-Xmx128m",
                "-cp", SystemCommands.testClassPath(), GroBatches.class.getName(),
                c.name(), PEER_IP, HOST_IP, String.valueOf(port));
        return new ProcessBuilder(cmd).redirectError(log.toFile()).start();
    }

    private static String read(Path log) {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }


}
