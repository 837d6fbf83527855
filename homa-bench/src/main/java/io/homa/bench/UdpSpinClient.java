package io.homa.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;

/**
 * {@code udp-spin}'s client: {@link #call} sends {@code [id u64][payload]} and polls its
 * non-blocking socket on the calling thread until the datagram with that id comes back (or
 * {@link #GIVE_UP_NANOS} passed: the datagram was lost, and the call fails). One call at a time
 * (calls from several threads take turns), so it is {@link #blocking()}.
 */
public final class UdpSpinClient implements EchoClient {
    /** Largest payload: with the id it stays within a 1,500-byte Ethernet MTU. */
    public static final int MAX_MESSAGE = UdpRawClient.MAX_MESSAGE;
    static final int MAX_DATAGRAM = UdpRawClient.ID_FIELD + MAX_MESSAGE;
    /** How long a call polls for its answer before it counts as lost. */
    private static final long GIVE_UP_NANOS = 5_000_000_000L;

    private final DatagramChannel channel;
    private final ByteBuffer out = ByteBuffer.allocateDirect(MAX_DATAGRAM);
    private final ByteBuffer in = ByteBuffer.allocateDirect(MAX_DATAGRAM);
    private long nextId = 1;
    private volatile boolean closed;

    public UdpSpinClient(InetSocketAddress server) {
        try {
            channel = DatagramChannel.open();
            channel.configureBlocking(false);
            channel.bind(new InetSocketAddress(NettyIo.HOST, 0));
            channel.connect(server);
        } catch (IOException e) {
            throw new UncheckedIOException("udp-spin: cannot open a socket to " + server, e);
        }
    }

    @Override
    public boolean blocking() {
        return true;
    }

    @Override
    public synchronized CompletableFuture<byte[]> call(byte[] request) {
        if (request.length > MAX_MESSAGE) {
            throw new IllegalArgumentException("udp-spin carries at most " + MAX_MESSAGE + " bytes, not " + request.length);
        }
        if (closed) {
            return CompletableFuture.failedFuture(new ClosedChannelException());
        }
        long id = nextId++;
        try {
            out.clear();
            out.putLong(id).put(request).flip();
            channel.write(out);
            long giveUp = System.nanoTime() + GIVE_UP_NANOS;
            while (true) {
                in.clear();
                if (channel.read(in) > 0) {
                    in.flip();
                    if (in.remaining() >= UdpRawClient.ID_FIELD && in.getLong() == id) {
                        byte[] reply = new byte[in.remaining()];
                        in.get(reply);
                        return CompletableFuture.completedFuture(reply);
                    }
                    continue; // a late answer to a call that gave up
                }
                if (closed || System.nanoTime() - giveUp > 0) {
                    return CompletableFuture.failedFuture(closed ? new ClosedChannelException()
                            : new TimeoutException("udp-spin: no answer to call " + id + " (lost)"));
                }
                Thread.onSpinWait();
            }
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public void close() {
        closed = true;
        synchronized (this) {
            try {
                channel.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }
}
