package io.homa;

import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.WireFormat;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.unix.SegmentedDatagramPacket;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Hand-made request segments sent as one UDP GSO send, which reaches a receiver with UDP GRO on
 * as one datagram (loopback and veth carry a GSO packet whole): the batches of {@link GroReceiveTest}.
 * Each case is a batch, then a follow-up datagram (the segment the batch lacked or spoiled) that
 * completes its requests. Its {@link #main} sends one case from another network namespace.
 */
final class GroBatches {
    /** Payload bytes of each full segment. */
    static final int SEGMENT = 1_000;
    static final int STRIDE = WireFormat.DATA_HEADER + SEGMENT;

    /** The cases: what the batch holds. */
    enum Case {
        /** One 3,500-byte request: three full segments and a shorter last one. */
        ONE_MESSAGE(1),
        /** Two 3,000-byte requests of two RPCs, three segments each. */
        SEVERAL_MESSAGES(2),
        /** A 4,000-byte request without its third segment (sent as the follow-up). */
        SEGMENT_MISSING(1),
        /** A 4,000-byte request whose second segment has an undefined flag (the good one follows). */
        HOSTILE_SEGMENT(1),
        /** A 3,500-byte request whose last segment is cut 7 bytes short (the whole one follows). */
        TRUNCATED_LAST(1);

        /** Requests the batch and its follow-up complete. */
        final int requests;

        Case(int requests) {
            this.requests = requests;
        }
    }

    /** A batch (segments back to back, as one GSO send) and the follow-up datagram. */
    record Batch(byte[] segments, byte[] followUp) {
    }

    private GroBatches() {
    }

    /** The payload byte {@code i} of the request with id {@code id}. */
    static byte payloadByte(long id, int i) {
        return (byte) (id * 31 + i);
    }

    static byte[] payload(long id, int length) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = payloadByte(id, i);
        }
        return b;
    }

    /** Segment {@code index} of request {@code id} ({@code length} bytes, all unscheduled). */
    static byte[] segment(long id, int length, int index) {
        int offset = index * SEGMENT;
        int n = Math.min(SEGMENT, length - offset);
        ByteBuffer b = ByteBuffer.allocate(WireFormat.DATA_HEADER + n);
        PacketEncoder.data(b, id, length, length, offset, 0, false, 0, 0, ByteBuffer.wrap(payload(id, length)), offset, n);
        return b.array();
    }

    static Batch batch(Case c) {
        List<byte[]> segs = new ArrayList<>();
        byte[] followUp;
        switch (c) {
            case ONE_MESSAGE -> {
                for (int i = 0; i < 4; i++) {
                    segs.add(segment(2, 3_500, i));
                }
                followUp = null;
            }
            case SEVERAL_MESSAGES -> {
                for (long id : new long[]{4, 6}) {
                    for (int i = 0; i < 3; i++) {
                        segs.add(segment(id, 3_000, i));
                    }
                }
                followUp = null;
            }
            case SEGMENT_MISSING -> {
                for (int i : new int[]{0, 1, 3}) {
                    segs.add(segment(8, 4_000, i));
                }
                followUp = segment(8, 4_000, 2);
            }
            case HOSTILE_SEGMENT -> {
                for (int i = 0; i < 4; i++) {
                    segs.add(segment(10, 4_000, i));
                }
                segs.get(1)[WireFormat.DATA_OFF_FLAGS] = (byte) 0x80;
                followUp = segment(10, 4_000, 1);
            }
            case TRUNCATED_LAST -> {
                for (int i = 0; i < 3; i++) {
                    segs.add(segment(12, 3_500, i));
                }
                byte[] last = segment(12, 3_500, 3);
                segs.add(java.util.Arrays.copyOf(last, last.length - 7));
                followUp = last;
            }
            default -> throw new IllegalArgumentException(c.name());
        }
        int total = segs.stream().mapToInt(s -> s.length).sum();
        ByteBuffer all = ByteBuffer.allocate(total);
        segs.forEach(all::put);
        return new Batch(all.array(), followUp);
    }

    /** An epoll datagram channel that sends batches from {@code bind} (and discards what it hears). */
    static final class Sender implements AutoCloseable {
        private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        private final Channel channel;

        Sender(InetSocketAddress bind) {
            this(bind, p -> { });
        }

        /** A sender that shows every datagram it hears to {@code heard} (on its loop; released after). */
        Sender(InetSocketAddress bind, java.util.function.Consumer<DatagramPacket> heard) {
            channel = new Bootstrap().group(group).channel(EpollDatagramChannel.class)
                    .handler(new ChannelInboundHandlerAdapter() {
                        @Override
                        public void channelRead(io.netty.channel.ChannelHandlerContext ctx, Object msg) {
                            try {
                                if (msg instanceof DatagramPacket p) {
                                    heard.accept(p);
                                }
                            } finally {
                                io.netty.util.ReferenceCountUtil.release(msg);
                            }
                        }
                    })
                    .bind(bind).syncUninterruptibly().channel();
        }

        InetSocketAddress localAddress() {
            return (InetSocketAddress) channel.localAddress();
        }

        /** The batch as one GSO send of {@link #STRIDE}-byte segments. */
        void sendBatch(Batch b, InetSocketAddress to) {
            ByteBuf bytes = Unpooled.directBuffer(b.segments().length).writeBytes(b.segments());
            channel.writeAndFlush(new SegmentedDatagramPacket(bytes, STRIDE, to)).syncUninterruptibly();
        }

        void sendFollowUp(Batch b, InetSocketAddress to) {
            ByteBuf bytes = Unpooled.directBuffer(b.followUp().length).writeBytes(b.followUp());
            channel.writeAndFlush(new DatagramPacket(bytes, to)).syncUninterruptibly();
        }

        @Override
        public void close() {
            channel.close().syncUninterruptibly();
            group.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    /**
     * {@code GroBatches CASE BIND_IP SERVER_IP SERVER_PORT}: sends the case's batch, prints "SENT",
     * then sends the follow-up when a line arrives on standard input and prints "DONE".
     */
    public static void main(String[] args) throws Exception {
        Case c = Case.valueOf(args[0]);
        Batch b = batch(c);
        InetSocketAddress to = new InetSocketAddress(args[2], Integer.parseInt(args[3]));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (Sender s = new Sender(new InetSocketAddress(args[1], 0))) {
            s.sendBatch(b, to);
            System.out.println("SENT");
            System.out.flush();
            if (b.followUp() != null && in.readLine() != null) {
                s.sendFollowUp(b, to);
            }
            System.out.println("DONE");
            System.out.flush();
        }
    }
}
