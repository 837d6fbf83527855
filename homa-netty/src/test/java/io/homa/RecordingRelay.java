package io.homa;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.ArrayList;
import java.util.List;

/**
 * A UDP relay between one client and a server on loopback that keeps a copy of every datagram
 * it passed to the server, so that a test can replay them later, as an attacker on the path would.
 */
final class RecordingRelay implements AutoCloseable {
    private final DatagramChannel channel;
    private final InetSocketAddress server;
    private final Thread thread;
    private final List<ByteBuffer> toServer = new ArrayList<>();
    private volatile boolean running = true;
    private volatile SocketAddress client;

    RecordingRelay(InetSocketAddress server) throws IOException {
        this.server = server;
        this.channel = DatagramChannel.open();
        channel.setOption(StandardSocketOptions.SO_RCVBUF, 4 << 20);
        channel.bind(new InetSocketAddress(Loopback.HOST, 0));
        channel.configureBlocking(true);
        this.thread = new Thread(this::run, "recording-relay");
        thread.setDaemon(true);
        thread.start();
    }

    InetSocketAddress address() throws IOException {
        return new InetSocketAddress(Loopback.HOST, ((InetSocketAddress) channel.getLocalAddress()).getPort());
    }

    /** Copies of the datagrams passed to the server so far. */
    synchronized List<ByteBuffer> recorded() {
        List<ByteBuffer> out = new ArrayList<>();
        for (ByteBuffer b : toServer) {
            out.add(b.duplicate());
        }
        return out;
    }

    /** Sends {@code datagrams} to the server again, from the relay's address (as the client's did). */
    void sendToServer(List<ByteBuffer> datagrams) throws IOException {
        for (ByteBuffer b : datagrams) {
            channel.send(b.duplicate(), server);
        }
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
                    ByteBuffer copy = ByteBuffer.allocate(b.remaining());
                    copy.put(b.duplicate()).flip();
                    synchronized (this) {
                        toServer.add(copy);
                    }
                }
                if (to != null) {
                    channel.send(b, to);
                }
            }
        } catch (IOException e) {
            // closed
        }
    }

    @Override
    public void close() throws Exception {
        running = false;
        channel.close();
        thread.join(5_000);
    }
}
