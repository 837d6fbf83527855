package io.homa.bench;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpTransportTest {
    private static final int[] SIZES = {0, 1, 100, 100_000, 1_000_000};

    static byte[] random(int size, long seed) {
        byte[] b = new byte[size];
        SplittableRandom r = new SplittableRandom(seed);
        for (int i = 0; i < size; i++) {
            b[i] = (byte) r.nextInt();
        }
        return b;
    }

    static byte[] await(CompletableFuture<byte[]> f) throws Exception {
        return f.get(20, TimeUnit.SECONDS);
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp-single", "tcp-pool"})
    void echo__everySize_oneAtATime(String transport) throws Exception {
        echoesEverySizeOneAtATime(transport);
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp-single", "tcp-pool"})
    void echo__everySize_allAtOnce(String transport) throws Exception {
        echoesEverySizeAllAtOnce(transport);
    }

    /** Echoes of 0 B to 1 MB, one at a time, come back intact (shared with the other stream transports' tests). */
    static void echoesEverySizeOneAtATime(String transport) throws Exception {
        try (EchoPair pair = EchoPair.open(transport)) {
            for (int size : SIZES) {
                byte[] request = random(size, size);
                assertArrayEquals(request, await(pair.client().call(request)), transport + " size " + size);
            }
        }
    }

    /** Three rounds of every size, all outstanding at once, each reply reaching its own call. */
    static void echoesEverySizeAllAtOnce(String transport) throws Exception {
        try (EchoPair pair = EchoPair.open(transport)) {
            List<byte[]> requests = new ArrayList<>();
            List<CompletableFuture<byte[]>> replies = new ArrayList<>();
            for (int round = 0; round < 3; round++) {
                for (int size : SIZES) {
                    byte[] request = random(size, 31L * size + round);
                    requests.add(request);
                    replies.add(pair.client().call(request));
                }
            }
            for (int i = 0; i < requests.size(); i++) {
                assertArrayEquals(requests.get(i), await(replies.get(i)), "call " + i);
            }
        }
    }

    @Test
    void tcpPool__growsOnDemand_andReusesConnections() throws Exception {
        try (EchoPair pair = EchoPair.open("tcp-pool")) {
            TcpPoolClient client = (TcpPoolClient) pair.client();
            for (int i = 0; i < 10; i++) {
                byte[] request = random(100, i);
                assertArrayEquals(request, await(client.call(request)));
            }
            assertEquals(1, client.peakConnections(), "sequential calls share one connection");
            for (int round = 0; round < 3; round++) {
                List<CompletableFuture<byte[]>> replies = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    replies.add(client.call(random(10_000, i)));
                }
                for (CompletableFuture<byte[]> f : replies) {
                    assertEquals(10_000, await(f).length);
                }
            }
            int peak = client.peakConnections();
            assertTrue(peak >= 1 && peak <= 8, "8 outstanding calls need at most 8 connections, had " + peak);
        }
    }

    @Test
    void tcpPool__callsBeyondTheCapWaitForAConnection() throws Exception {
        try (TcpEchoServer server = new TcpEchoServer(); TcpPoolClient client = new TcpPoolClient(server.address(), 2)) {
            List<byte[]> requests = new ArrayList<>();
            List<CompletableFuture<byte[]>> replies = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                byte[] request = random(50_000, i);
                requests.add(request);
                replies.add(client.call(request));
            }
            for (int i = 0; i < requests.size(); i++) {
                assertArrayEquals(requests.get(i), await(replies.get(i)));
            }
            assertTrue(client.peakConnections() <= 2);
        }
    }

    /** Holds each first frame until the next one arrives, then answers the second one first. */
    @ChannelHandler.Sharable
    static final class Reverser extends ChannelInboundHandlerAdapter {
        /** Ids of the frames in the order they were answered. */
        final List<Long> answered = new CopyOnWriteArrayList<>();
        private ByteBuf held; // only touched on the server's single event loop

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (held == null) {
                held = (ByteBuf) msg;
                return;
            }
            ByteBuf frame = (ByteBuf) msg;
            answered.add(TcpFrames.id(frame));
            answered.add(TcpFrames.id(held));
            ctx.write(frame);
            ctx.writeAndFlush(held);
            held = null;
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (held != null) {
                held.release();
                held = null;
            }
        }
    }

    @Test
    void tcpSingle__repliesOutOfOrder_reachTheirCalls() throws Exception {
        Reverser reverser = new Reverser();
        try (TcpEchoServer server = new TcpEchoServer(reverser);
             TcpSingleClient client = new TcpSingleClient(server.address())) {
            for (int round = 0; round < 5; round++) {
                byte[] first = random(1000 + round, 2L * round);
                byte[] second = random(10 + round, 2L * round + 1);
                CompletableFuture<byte[]> a = client.call(first);
                CompletableFuture<byte[]> b = client.call(second);
                // Each reply reaches its own call although the second came back first.
                assertArrayEquals(first, await(a));
                assertArrayEquals(second, await(b));
                List<Long> answered = reverser.answered;
                assertEquals(2 * (round + 1), answered.size());
                assertTrue(answered.get(2 * round) > answered.get(2 * round + 1),
                        "the server answered the later call first: " + answered);
            }
        }
    }

    @Test
    void tcpSingle__closeFailsOutstandingCalls() throws Exception {
        try (TcpEchoServer server = new TcpEchoServer(new Reverser())) {
            TcpSingleClient client = new TcpSingleClient(server.address());
            CompletableFuture<byte[]> held = client.call(random(10, 1)); // the server holds it forever
            client.close();
            assertTrue(held.isCompletedExceptionally());
            assertTrue(client.call(new byte[1]).isCompletedExceptionally());
        }
    }

    /**
     * The server's close ends the connections it accepted, even one in the middle of a frame, so
     * the partial frame its decoder holds is released (the leak check after each test sees it if
     * not) and the peer reads end of stream (or a reset) instead of waiting on a socket nobody serves.
     */
    @Test
    void echoServer__closeEndsEveryConnection_evenMidFrame() throws Exception {
        TcpEchoServer server = new TcpEchoServer();
        try (java.net.Socket peer = new java.net.Socket(server.address().getAddress(), server.address().getPort())) {
            peer.setSoTimeout(10_000);
            java.io.DataOutputStream out = new java.io.DataOutputStream(peer.getOutputStream());
            java.io.DataInputStream in = new java.io.DataInputStream(peer.getInputStream());
            out.writeInt(TcpFrames.ID_FIELD + 3);
            out.writeLong(7);
            out.write(new byte[] {1, 2, 3});
            out.flush();
            assertEquals(TcpFrames.ID_FIELD + 3, in.readInt(), "a whole frame is echoed");
            assertEquals(7, in.readLong());
            in.readFully(new byte[3]);

            out.writeInt(TcpFrames.ID_FIELD + 1000); // a frame that never completes
            out.writeLong(8);
            out.write(new byte[10]);
            out.flush();
            server.close();
            int end;
            try {
                end = in.read();
            } catch (java.net.SocketTimeoutException e) {
                throw new AssertionError("the connection outlived the server's close", e);
            } catch (java.net.SocketException reset) { // closed with bytes it had not read yet
                end = -1;
            }
            assertEquals(-1, end, "the server's close ends the connection");
        } finally {
            server.close();
        }
    }
}
