package io.homa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Secured sockets on real sockets, through the public API: sealed echoes of every size (one
 * datagram, GSO sends, zero-copy payloads), and every refusal the security layer owes: a
 * plaintext request to a secured server, a sealed one to a plain server, a wrong key, a replay
 * of recorded datagrams, each counted with its reason and without a handler run; and a key
 * rotation under load with no failed or repeated call.
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class SecuredSocketTest {
    private static final byte[] KEY = new SplittableRandom(30).ints(32, 0, 256).collect(
            java.io.ByteArrayOutputStream::new, (o, i) -> o.write(i), (a, b) -> { }).toByteArray();

    private static HomaConfig.Builder secured(HomaKeyRing ring) {
        return Loopback.config().security(HomaSecurity.preSharedKeys(ring).peerName("cluster-a"));
    }

    private static long shell(HomaSocket s, HomaMetrics.Shell c) {
        return s.metrics().shell(c);
    }

    @Test
    void echoesOfEverySizeTravelSealedAndHandlersSeeTheIdentity() throws Exception {
        echoes(false);
    }

    /** The same with UDP GRO on both sides: a coalesced datagram of sealed segments is opened segment by segment. */
    @Test
    void echoesTravelSealedWithGro() throws Exception {
        echoes(true);
    }

    private void echoes(boolean gro) throws Exception {
        HomaKeyRing ring = HomaKeyRing.of(HomaKeyRing.Cipher.AES_GCM_128, KEY);
        Set<String> identities = ConcurrentHashMap.newKeySet();
        try (HomaSocket server = HomaSocket.open(secured(ring).gro(gro).build());
             HomaSocket client = HomaSocket.open(secured(HomaKeyRing.of(HomaKeyRing.Cipher.AES_GCM_128, KEY)).gro(gro).build())) {
            server.serve(r -> {
                identities.add(String.valueOf(r.peerIdentity()));
                r.reply(r.payload());
            });
            InetSocketAddress to = Loopback.addressOf(server);
            SplittableRandom random = new SplittableRandom(7);
            for (int size : new int[] {0, 1, 100, 1_400, 1_500, 10_000, 100_000, 1_000_000}) {
                byte[] req = new byte[size];
                random.nextBytes(req);
                assertArrayEquals(req, client.call(to, req).get(30, TimeUnit.SECONDS), size + " B");
                ByteBuf direct = Unpooled.directBuffer(Math.max(1, size)).writeBytes(req);
                ByteBuf resp = client.call(to, direct).get(30, TimeUnit.SECONDS); // the zero-copy send path
                try {
                    byte[] got = new byte[resp.readableBytes()];
                    resp.getBytes(resp.readerIndex(), got);
                    assertArrayEquals(req, got, size + " B as a ByteBuf");
                } finally {
                    resp.release();
                }
            }
            assertEquals(Set.of("cluster-a"), identities);
            assertTrue(client.rpcs().stream().allMatch(r -> "cluster-a".equals(r.peerIdentity())));
            assertTrue(shell(client, HomaMetrics.Shell.DATAGRAMS_SEALED) > 0);
            HomaMetrics cm = client.metrics(); // one snapshot: an ACK may leave between two
            assertEquals(cm.shell(HomaMetrics.Shell.DATAGRAMS_SEALED), cm.shell(HomaMetrics.Shell.DATAGRAMS_SENT), cm.toString());
            assertTrue(shell(server, HomaMetrics.Shell.DATAGRAMS_OPENED) > 0);
            for (HomaSocket s : new HomaSocket[] {client, server}) {
                for (HomaMetrics.Shell c : new HomaMetrics.Shell[] {HomaMetrics.Shell.SECURITY_NOT_SEALED,
                        HomaMetrics.Shell.SECURITY_AUTH_FAILED, HomaMetrics.Shell.SECURITY_BAD_HEADER,
                        HomaMetrics.Shell.SECURITY_UNKNOWN_KEY}) {
                    assertEquals(0, shell(s, c), c + ": " + s.metrics());
                }
            }
        }
    }

    @Test
    void plaintextToASecuredServerIsRefusedAndCounted() throws Exception {
        HomaKeyRing ring = HomaKeyRing.of(HomaKeyRing.Cipher.AES_GCM_256, KEY);
        AtomicInteger handled = new AtomicInteger();
        try (HomaSocket server = HomaSocket.open(secured(ring).build());
             HomaSocket plain = HomaSocket.open(Loopback.config().build())) {
            server.serve(r -> {
                handled.incrementAndGet();
                r.reply(r.toByteArray());
            });
            CompletableFuture<byte[]> call = plain.call(Loopback.addressOf(server), new byte[100], Duration.ofMillis(300));
            ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(10, TimeUnit.SECONDS));
            assertInstanceOf(HomaTimeoutException.class, e.getCause());
            assertTrue(shell(server, HomaMetrics.Shell.SECURITY_NOT_SEALED) > 0, server.metrics().toString());
            assertEquals(0, handled.get());
            assertEquals(0, server.metrics().shell(HomaMetrics.Shell.DATAGRAMS_SENT), "a secured server answered plaintext");
        }
    }

    @Test
    void aSealedRequestToAPlainServerIsRefusedAndCounted() throws Exception {
        AtomicInteger handled = new AtomicInteger();
        try (HomaSocket server = HomaSocket.open(Loopback.config().build());
             HomaSocket client = HomaSocket.open(secured(HomaKeyRing.of(HomaKeyRing.Cipher.AES_GCM_128, KEY)).build())) {
            server.serve(r -> {
                handled.incrementAndGet();
                r.reply(r.toByteArray());
            });
            CompletableFuture<byte[]> call = client.call(Loopback.addressOf(server), new byte[100], Duration.ofMillis(300));
            ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(10, TimeUnit.SECONDS));
            assertInstanceOf(HomaTimeoutException.class, e.getCause());
            assertTrue(server.metrics().drops("SEALED") > 0, server.metrics().toString());
            assertEquals(0, handled.get());
        }
    }

    @Test
    void aWrongKeyIsRefusedAndCounted() throws Exception {
        AtomicInteger handled = new AtomicInteger();
        byte[] other = KEY.clone();
        other[0] ^= 1;
        try (HomaSocket server = HomaSocket.open(secured(HomaKeyRing.of(HomaKeyRing.Cipher.AES_GCM_128, KEY)).build());
             HomaSocket client = HomaSocket.open(secured(HomaKeyRing.of(HomaKeyRing.Cipher.AES_GCM_128, other)).build())) {
            server.serve(r -> {
                handled.incrementAndGet();
                r.reply(r.toByteArray());
            });
            CompletableFuture<byte[]> call = client.call(Loopback.addressOf(server), new byte[5_000], Duration.ofMillis(300));
            ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(10, TimeUnit.SECONDS));
            assertInstanceOf(HomaTimeoutException.class, e.getCause());
            assertTrue(shell(server, HomaMetrics.Shell.SECURITY_AUTH_FAILED) > 0, server.metrics().toString());
            assertEquals(0, handled.get());
            assertEquals(0, shell(server, HomaMetrics.Shell.DATAGRAMS_SENT));
        }
    }

    @Test
    void replayedDatagramsAreRefusedAndRunNoHandler() throws Exception {
        AtomicInteger handled = new AtomicInteger();
        try (HomaSocket server = HomaSocket.open(secured(HomaKeyRing.of(HomaKeyRing.Cipher.AES_GCM_128, KEY)).build());
             HomaSocket client = HomaSocket.open(secured(HomaKeyRing.of(HomaKeyRing.Cipher.AES_GCM_128, KEY)).build());
             RecordingRelay relay = new RecordingRelay(Loopback.addressOf(server))) {
            server.serve(r -> {
                handled.incrementAndGet();
                r.reply(r.toByteArray());
            });
            for (int i = 0; i < 20; i++) {
                client.call(relay.address(), new byte[100 + i * 500]).get(30, TimeUnit.SECONDS);
            }
            assertEquals(20, handled.get());
            List<ByteBuffer> recorded = relay.recorded();
            long refusedBefore = shell(server, HomaMetrics.Shell.SECURITY_REPLAY);
            relay.sendToServer(recorded);
            Loopback.await(Duration.ofSeconds(20),
                    () -> shell(server, HomaMetrics.Shell.SECURITY_REPLAY) - refusedBefore >= recorded.size(),
                    () -> recorded.size() + " replayed: " + server.metrics());
            assertEquals(20, handled.get(), "a replayed request ran its handler again");
        }
    }

    @Test
    void keysRotateUnderLoadWithoutAFailedOrRepeatedCall() throws Exception {
        HomaKeyRing serverKeys = HomaKeyRing.of(HomaKeyRing.Cipher.AES_GCM_128, KEY);
        HomaKeyRing clientKeys = HomaKeyRing.of(HomaKeyRing.Cipher.AES_GCM_128, KEY);
        Set<Long> seen = ConcurrentHashMap.newKeySet();
        AtomicInteger repeated = new AtomicInteger();
        try (HomaSocket server = HomaSocket.open(secured(serverKeys).build());
             HomaSocket client = HomaSocket.open(secured(clientKeys).build())) {
            server.serve(r -> {
                long id = ByteBuffer.wrap(r.toByteArray()).getLong();
                if (!seen.add(id)) {
                    repeated.incrementAndGet();
                }
                r.reply(r.toByteArray());
            });
            InetSocketAddress to = Loopback.addressOf(server);
            AtomicLong next = new AtomicLong();
            AtomicLong completed = new AtomicLong();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> callers = new ArrayList<>();
            byte[] newKey = HomaKeyRing.newMasterKey();
            java.util.concurrent.CountDownLatch phase = new java.util.concurrent.CountDownLatch(1);
            for (int t = 0; t < 4; t++) {
                Thread th = new Thread(() -> {
                    try {
                        while (!phase.await(0, TimeUnit.MILLISECONDS) || completed.get() < 4_000) {
                            long id = next.incrementAndGet();
                            byte[] req = ByteBuffer.allocate(8 + (int) (id % 3) * 3_000).putLong(id).array();
                            assertArrayEquals(req, client.call(to, req).get(30, TimeUnit.SECONDS));
                            completed.incrementAndGet();
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "caller-" + t);
                th.start();
                callers.add(th);
            }
            Loopback.await(Duration.ofSeconds(30), () -> completed.get() >= 500, () -> "warm-up: " + completed);
            serverKeys.install(1, newKey); // every receiver accepts both keys...
            clientKeys.install(1, newKey);
            long atInstall = completed.get();
            Loopback.await(Duration.ofSeconds(30), () -> completed.get() >= atInstall + 300, () -> "after install");
            clientKeys.sendWith(1); // ...then senders move...
            serverKeys.sendWith(1);
            long atSwitch = completed.get();
            Loopback.await(Duration.ofSeconds(30), () -> completed.get() >= atSwitch + 1_000, () -> "after switch");
            serverKeys.remove(0); // ...and the old key goes, once its packets are gone
            clientKeys.remove(0);
            phase.countDown();
            for (Thread th : callers) {
                th.join(60_000);
            }
            assertNull(failure.get(), () -> "a call failed during the rotation: " + failure.get());
            assertEquals(0, repeated.get(), "a request ran twice");
            assertEquals(completed.get(), seen.size());
            assertTrue(completed.get() >= 4_000);
            for (HomaSocket s : new HomaSocket[] {client, server}) {
                assertEquals(0, shell(s, HomaMetrics.Shell.SECURITY_AUTH_FAILED), s.metrics().toString());
                assertEquals(0, shell(s, HomaMetrics.Shell.CALLS_FAILED), s.metrics().toString());
            }
        }
    }

    @Test
    void badSecurityArgumentsSayWhatWasWrong() {
        assertThrows(HomaBadArgumentException.class, () -> HomaKeyRing.of(HomaKeyRing.Cipher.AES_GCM_128, new byte[16]));
        assertThrows(HomaBadArgumentException.class, () -> HomaKeyRing.of(null, KEY));
        assertThrows(HomaBadArgumentException.class, () -> HomaSecurity.preSharedKeys(null));
        HomaKeyRing ring = HomaKeyRing.of(HomaKeyRing.Cipher.AES_GCM_128, KEY);
        assertThrows(HomaBadArgumentException.class, () -> ring.install(2, KEY));
        assertThrows(IllegalStateException.class, () -> ring.sendWith(1));
        assertThrows(IllegalStateException.class, () -> ring.remove(0));
        assertThrows(HomaBadArgumentException.class, () -> HomaSecurity.preSharedKeys(ring).peerName(" "));
        HomaBadArgumentException e = assertThrows(HomaBadArgumentException.class,
                () -> secured(ring).tcpFallback(true).build());
        assertTrue(e.getMessage().contains("tcpFallback"), e.getMessage());
        assertTrue(!ring.toString().contains(String.valueOf(KEY[0])) || ring.toString().startsWith("HomaKeyRing{"));
    }
}
