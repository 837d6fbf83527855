package io.homa;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Received payloads reach user code as the pooled memory they arrived in (a datagram slice, or a
 * composite of 64 KiB chunks), and every reference is released on every path: handlers that keep,
 * release or reply with the request's buffer, callers that keep or drop the response, a response
 * nobody takes, requests still open at close. The leak detector (PARANOID, {@link LeakCheck})
 * checks each test.
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class ZeroCopyOwnershipTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private HomaSocket server;
    private HomaSocket client;

    @BeforeEach
    void open() {
        server = HomaSocket.open(Loopback.config().build());
        client = HomaSocket.open(Loopback.config().build());
    }

    @AfterEach
    void close() {
        client.close();
        server.close();
    }

    private static byte[] random(int size) {
        byte[] b = new byte[size];
        new Random(size).nextBytes(b);
        return b;
    }

    private ByteBuf call(ByteBuf request) throws Exception {
        return client.call(Loopback.addressOf(server), request).get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    /** One datagram, two datagrams in one chunk, several chunks. */
    @ParameterizedTest
    @ValueSource(ints = {0, 100, 5000, 200_000, 1 << 20})
    void handlerRepliesWithTheRequestBuffer_echoedWithoutCopies(int size) throws Exception {
        server.serve(r -> r.reply(r.payload()));
        byte[] bytes = random(size);
        ByteBuf response = call(PooledByteBufAllocator.DEFAULT.directBuffer(size).writeBytes(bytes));
        try {
            assertArrayEquals(bytes, ByteBufUtil.getBytes(response));
            int chunks = (size + 65_535) / 65_536;
            if (chunks > 1) {
                CompositeByteBuf c = assertInstanceOfComposite(response);
                assertEquals(chunks, c.numComponents(), "one component per 64 KiB chunk: no copy into one buffer");
            } else if (size > 0) {
                assertTrue(response.isDirect(), "the pooled memory it was received in");
            }
        } finally {
            boolean freed = response.release();
            assertTrue(freed || size == 0, "the caller held the only reference (an empty response is Netty's empty buffer)");
        }
        Loopback.awaitIdle(client, server);
    }

    private static CompositeByteBuf assertInstanceOfComposite(ByteBuf b) {
        ByteBuf u = b;
        while (!(u instanceof CompositeByteBuf) && u.unwrap() != null) {
            u = u.unwrap();
        }
        assertTrue(u instanceof CompositeByteBuf, "a composite: " + b);
        return (CompositeByteBuf) u;
    }

    /** A request in several parts is read in place: the engine takes its parts, not a gathered copy. */
    @ParameterizedTest
    @ValueSource(ints = {1, 1500, 70_000, 300_000})
    void compositeRequest_sentPartByPart(int partSize) throws Exception {
        server.serve(r -> r.reply(r.toByteArray()));
        byte[] bytes = random(3 * partSize + 7);
        CompositeByteBuf request = PooledByteBufAllocator.DEFAULT.compositeDirectBuffer();
        int at = 0;
        for (int n : new int[]{partSize, 0, partSize + 7, partSize}) {
            request.addComponent(true, PooledByteBufAllocator.DEFAULT.directBuffer(n).writeBytes(bytes, at, n));
            at += n;
        }
        ByteBuf response = call(request);
        try {
            Loopback.awaitReleased(request, "the request the socket owned");
            assertArrayEquals(bytes, ByteBufUtil.getBytes(response));
        } finally {
            response.release();
        }
        Loopback.awaitIdle(client, server);
    }

    @ParameterizedTest
    @ValueSource(ints = {100, 200_000})
    void handlerKeepsThePayloadBeyondItsReply(int size) throws Exception {
        BlockingQueue<ByteBuf> kept = new LinkedBlockingQueue<>();
        BlockingQueue<Throwable> late = new LinkedBlockingQueue<>();
        server.serve(r -> {
            ByteBuf p = r.payload();
            kept.add(p);
            r.reply(new byte[]{1});
            late.add(assertThrows(IllegalStateException.class, r::toByteArray, "bytes released at the reply"));
            late.add(assertThrows(IllegalStateException.class, r::payload, "bytes released at the reply"));
        });
        byte[] bytes = random(size);
        assertArrayEquals(new byte[]{1}, client.call(Loopback.addressOf(server), bytes).get(30, TimeUnit.SECONDS));
        assertNotNull(late.poll(30, TimeUnit.SECONDS));
        assertNotNull(late.poll(30, TimeUnit.SECONDS));
        ByteBuf p = kept.poll(30, TimeUnit.SECONDS);
        assertNotNull(p);
        assertArrayEquals(bytes, ByteBufUtil.getBytes(p), "still valid after the reply");
        assertTrue(p.release());
        Loopback.awaitIdle(client, server);
    }

    @Test
    void handlerReleasesThePayloadAtOnce_andTakesSeveralViews() throws Exception {
        server.serve(r -> {
            ByteBuf a = r.payload();
            ByteBuf b = r.payload();
            a.skipBytes(1); // views have their own indices
            int readable = b.readableBytes();
            a.release();
            b.release();
            r.reply(new byte[]{(byte) readable});
        });
        byte[] reply = client.call(Loopback.addressOf(server), new byte[50]).get(30, TimeUnit.SECONDS);
        assertEquals(50, reply[0]);
        Loopback.awaitIdle(client, server);
    }

    @ParameterizedTest
    @ValueSource(ints = {100, 200_000})
    void aViewWhoseIndicesMove_leavesTheRequestWhole(int size) throws Exception {
        server.serve(r -> {
            ByteBuf a = r.payload(); // the first view is the request's own buffer object, lent
            a.skipBytes(a.readableBytes() / 2);
            a.writerIndex(a.readerIndex()); // nothing readable left in this view
            a.release();
            byte[] copy = r.toByteArray();
            ByteBuf b = r.payload();
            if (b == a || !java.util.Arrays.equals(copy, ByteBufUtil.getBytes(b))) {
                b.release();
                r.reply(new byte[0]);
            } else {
                r.reply(b); // the second view, whole, echoed
            }
        });
        byte[] bytes = random(size);
        assertArrayEquals(bytes, client.call(Loopback.addressOf(server), bytes).get(30, TimeUnit.SECONDS));
        Loopback.awaitIdle(client, server);
    }

    @Test
    void responseNobodyTakes_released() throws Exception {
        BlockingQueue<HomaRequest> held = new LinkedBlockingQueue<>();
        server.serve(held::add);
        CompletableFuture<ByteBuf> f = client.call(Loopback.addressOf(server), Unpooled.wrappedBuffer(new byte[10]));
        HomaRequest r = held.poll(30, TimeUnit.SECONDS);
        assertNotNull(r);
        assertTrue(f.complete(Unpooled.EMPTY_BUFFER), "the caller completes its future itself");
        long before = client.metrics().shell(HomaMetrics.Shell.CALLS_SUCCEEDED);
        r.reply(PooledByteBufAllocator.DEFAULT.directBuffer().writeBytes(random(3000)));
        Loopback.await(WAIT, () -> client.metrics().shell(HomaMetrics.Shell.CALLS_SUCCEEDED) > before,
                () -> "the response never came: " + client.metrics());
        Loopback.awaitIdle(client, server);
    }

    @ParameterizedTest
    @ValueSource(ints = {100, 200_000})
    void requestsOpenAtClose_releasedWithTheSocket(int size) throws Exception {
        BlockingQueue<HomaRequest> held = new LinkedBlockingQueue<>();
        server.serve(held::add);
        CompletableFuture<byte[]> f = client.call(Loopback.addressOf(server), random(size));
        HomaRequest r = held.poll(30, TimeUnit.SECONDS);
        assertNotNull(r);
        assertEquals(size, r.toByteArray().length);
        server.close();
        assertFalse(r.isOpen());
        assertThrows(IllegalStateException.class, r::toByteArray);
        r.reply(new byte[1]); // discarded
        f.cancel(true);
    }

    @Test
    void responseToByteArrayCaller_copiedOnceAndReleased() throws Exception {
        server.serve(r -> r.reply(r.payload()));
        for (int size : new int[]{10, 3000, 300_000}) {
            byte[] bytes = random(size);
            assertArrayEquals(bytes, client.call(Loopback.addressOf(server), bytes).get(30, TimeUnit.SECONDS));
        }
        Loopback.awaitIdle(client, server);
    }
}
