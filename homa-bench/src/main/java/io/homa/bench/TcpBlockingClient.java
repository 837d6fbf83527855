package io.homa.bench;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.ClosedChannelException;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * {@code tcp-blocking}'s client: {@link #call} writes the request and reads the reply on the
 * calling thread, over a connection that no other call uses meanwhile (an idle one, or a new one:
 * as many connections as callers at once). So it is {@link #blocking()}: the benchmarks call it from
 * as many threads as they want calls in flight.
 */
public final class TcpBlockingClient implements EchoClient {
    private final InetSocketAddress server;
    private final ConcurrentLinkedDeque<Connection> idle = new ConcurrentLinkedDeque<>();
    private final Set<Connection> all = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    public TcpBlockingClient(InetSocketAddress server) {
        this.server = server;
        idle.push(open()); // fails here, not at the first call, when the server is not there
    }

    private Connection open() {
        try {
            Connection c = new Connection(server);
            all.add(c);
            return c;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("tcp-blocking: cannot connect to " + server, e);
        }
    }

    @Override
    public boolean blocking() {
        return true;
    }

    @Override
    public CompletableFuture<byte[]> call(byte[] request) {
        if (request.length > TcpFrames.MAX_PAYLOAD) {
            throw new IllegalArgumentException("tcp-blocking carries at most " + TcpFrames.MAX_PAYLOAD + " bytes");
        }
        if (closed) {
            return CompletableFuture.failedFuture(new ClosedChannelException());
        }
        Connection c = idle.poll();
        try {
            if (c == null) {
                c = open();
            }
            byte[] reply = c.echo(request);
            idle.push(c);
            return CompletableFuture.completedFuture(reply);
        } catch (IOException | RuntimeException e) {
            if (c != null) {
                c.close();
                all.remove(c);
            }
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public void close() {
        closed = true;
        for (Connection c : all) {
            c.close();
        }
        all.clear();
        idle.clear();
    }

    /** One connection, used by one call at a time. */
    private static final class Connection {
        private final Socket socket;
        private final DataInputStream in;
        private final DataOutputStream out;

        Connection(InetSocketAddress server) throws IOException {
            socket = new Socket();
            socket.setTcpNoDelay(true);
            socket.connect(server, 5_000);
            in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 64 * 1024));
            out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream(), 64 * 1024));
        }

        byte[] echo(byte[] request) throws IOException {
            out.writeInt(request.length);
            out.write(request);
            out.flush();
            int n = in.readInt();
            if (n < 0 || n > TcpFrames.MAX_PAYLOAD) {
                throw new IOException("tcp-blocking: a reply of " + n + " bytes");
            }
            byte[] reply = new byte[n];
            in.readFully(reply);
            return reply;
        }

        void close() {
            try {
                socket.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }
}
