package io.homa.bench;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@code tcp-blocking}'s server: a thread accepts, and each connection gets a thread of its own
 * that reads a frame {@code [length u32][bytes]} and writes it back, until the peer closes.
 */
public final class TcpBlockingServer implements EchoServer {
    private final ServerSocket listener;
    private final Thread acceptor;
    private final Set<Socket> connections = ConcurrentHashMap.newKeySet();
    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    public TcpBlockingServer() {
        try {
            listener = new ServerSocket();
            listener.bind(new InetSocketAddress(NettyIo.HOST, 0), 128);
        } catch (IOException e) {
            throw new UncheckedIOException("tcp-blocking: cannot listen on " + NettyIo.HOST, e);
        }
        acceptor = new Thread(this::accept, "tcp-blocking-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    private void accept() {
        while (!closed) {
            Socket s;
            try {
                s = listener.accept();
                s.setTcpNoDelay(true);
            } catch (IOException e) {
                return; // closed
            }
            connections.add(s);
            Thread t = new Thread(() -> serve(s), "tcp-blocking-conn");
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
    }

    private void serve(Socket s) {
        try (s; DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream(), 64 * 1024));
             DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream(), 64 * 1024))) {
            byte[] buf = new byte[0];
            while (!closed) {
                int n = in.readInt();
                if (n < 0 || n > TcpFrames.MAX_PAYLOAD) {
                    return; // not ours: drop the connection
                }
                if (buf.length < n) {
                    buf = new byte[n];
                }
                in.readFully(buf, 0, n);
                out.writeInt(n);
                out.write(buf, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // the peer closed, or we did
        } finally {
            connections.remove(s);
            threads.remove(Thread.currentThread());
        }
    }

    @Override
    public InetSocketAddress address() {
        return (InetSocketAddress) listener.getLocalSocketAddress();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            listener.close();
        } catch (IOException e) {
            // closing anyway
        }
        for (Socket s : connections) {
            try {
                s.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
        join(acceptor);
        for (Thread t : threads) {
            join(t);
        }
    }

    private static void join(Thread t) {
        try {
            t.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
