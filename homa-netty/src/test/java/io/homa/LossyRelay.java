package io.homa;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A UDP relay between one client and one server on loopback that drops a seeded share of the
 * datagrams it passes, both ways: loss injected after the sender's kernel, so that it hits the
 * segments of a GSO send one by one (the sockets' own fault injector sends segment by segment).
 * The client calls {@link #address()}; the relay forwards to the server whatever comes from
 * elsewhere, and to the last such sender whatever comes from the server.
 */
final class LossyRelay implements AutoCloseable {
    private final DatagramChannel channel;
    private final InetSocketAddress server;
    private final double dropRate;
    private final SplittableRandom random;
    private final Thread thread;
    private final AtomicLong passed = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private volatile boolean running = true;
    private volatile SocketAddress client;

    LossyRelay(InetSocketAddress server, double dropRate, long seed) throws IOException {
        this.server = server;
        this.dropRate = dropRate;
        this.random = new SplittableRandom(seed);
        this.channel = DatagramChannel.open();
        channel.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20);
        channel.bind(new InetSocketAddress(Loopback.HOST, 0));
        channel.configureBlocking(true);
        this.thread = new Thread(this::run, "lossy-relay");
        thread.setDaemon(true);
        thread.start();
    }

    InetSocketAddress address() throws IOException {
        return new InetSocketAddress(Loopback.HOST, ((InetSocketAddress) channel.getLocalAddress()).getPort());
    }

    long dropped() {
        return dropped.get();
    }

    long passed() {
        return passed.get();
    }

    private void run() {
        ByteBuffer b = ByteBuffer.allocateDirect(65_536);
        try {
            while (running) {
                b.clear();
                SocketAddress from = channel.receive(b);
                b.flip();
                SocketAddress to;
                if (from.equals(server)) {
                    to = client;
                } else {
                    client = from;
                    to = server;
                }
                if (to == null || random.nextDouble() < dropRate) {
                    dropped.incrementAndGet();
                    continue;
                }
                channel.send(b, to);
                passed.incrementAndGet();
            }
        } catch (IOException e) {
            // closed
        }
    }

    @Override
    public void close() throws Exception {
        running = false;
        channel.close(); // ends the blocked receive
        thread.join(5_000);
    }
}
