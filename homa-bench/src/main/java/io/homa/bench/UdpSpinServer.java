package io.homa.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;

/**
 * {@code udp-spin}'s server: one thread polls a non-blocking datagram socket without pause and
 * sends every datagram back to its sender. A core stays busy until {@link #close()}.
 */
public final class UdpSpinServer implements EchoServer {
    private final DatagramChannel channel;
    private final Thread spinner;
    private volatile boolean closed;

    public UdpSpinServer() {
        try {
            channel = DatagramChannel.open();
            channel.configureBlocking(false);
            channel.bind(new InetSocketAddress(NettyIo.HOST, 0));
        } catch (IOException e) {
            throw new UncheckedIOException("udp-spin: cannot bind on " + NettyIo.HOST, e);
        }
        spinner = new Thread(this::spin, "udp-spin-server");
        spinner.setDaemon(true);
        spinner.start();
    }

    private void spin() {
        ByteBuffer buf = ByteBuffer.allocateDirect(UdpSpinClient.MAX_DATAGRAM);
        while (!closed) {
            try {
                buf.clear();
                SocketAddress from = channel.receive(buf);
                if (from == null) {
                    Thread.onSpinWait();
                    continue;
                }
                buf.flip();
                channel.send(buf, from);
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                // a send refused by the kernel (the client went away): drop it, as UDP does
            }
        }
    }

    @Override
    public InetSocketAddress address() {
        try {
            return (InetSocketAddress) channel.getLocalAddress();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            spinner.join(5_000);
            channel.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            // closing anyway
        }
    }
}
