package io.homa.bench.collective;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.concurrent.TimeUnit;

/**
 * A TCP bulk flow for the testbed: what shares the links with a collective in
 * {@code scripts/collective-testbed --bulk} (issue 29's "a TCP bulk flow on the same links"). One
 * connection; the sender writes 64 KiB blocks for a fixed time, then closes; the receiver reads
 * until the sender closes. Each side prints one line, {@code tcp-bulk: SIDE BYTES bytes in S s,
 * M Mbit/s}. Both stop by themselves: the receiver gives up {@link #GRACE_SECONDS} after the
 * flow's time if nobody connects or the sender stalls.
 *
 * <pre>
 * java -jar homa-bench.jar tcp-bulk --listen PORT --seconds N
 * java -jar homa-bench.jar tcp-bulk --to HOST:PORT --seconds N
 * </pre>
 */
public final class BulkTcp {
    /** How long past the flow's time a receiver waits for a connection or for data. */
    static final int GRACE_SECONDS = 30;
    private static final int BLOCK = 64 * 1024;

    private BulkTcp() {
    }

    /** The command line; returns the exit code (2 for bad arguments, 1 for an I/O failure). */
    public static int execute(String[] args, PrintStream out) {
        Integer listen = null;
        InetSocketAddress to = null;
        double seconds = 10;
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--listen" -> listen = Integer.parseInt(args[++i]);
                    case "--to" -> to = io.homa.bench.load.LoadNodeCommand.address(args[++i]);
                    case "--seconds" -> seconds = Double.parseDouble(args[++i]);
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if ((listen == null) == (to == null)) {
                throw new IllegalArgumentException("give exactly one of --listen PORT and --to HOST:PORT");
            }
            if (!(seconds > 0 && seconds <= 3600)) {
                throw new IllegalArgumentException("--seconds must be in (0, 3600], was " + seconds);
            }
        } catch (RuntimeException e) {
            out.println("tcp-bulk: " + e.getMessage()
                    + "\nusage: tcp-bulk --listen PORT --seconds N | tcp-bulk --to HOST:PORT --seconds N");
            return 2;
        }
        try {
            Flow f = listen != null ? receive(listen, seconds) : send(to, seconds);
            out.printf("tcp-bulk: %s %d bytes in %.2f s, %.1f Mbit/s%n", listen != null ? "received" : "sent",
                    f.bytes, f.nanos / 1e9, f.mbitPerSecond());
            return 0;
        } catch (IOException e) {
            out.println("tcp-bulk: " + e);
            return 1;
        }
    }

    /** Bytes moved and the time it took. */
    record Flow(long bytes, long nanos) {
        double mbitPerSecond() {
            return nanos == 0 ? 0 : bytes * 8e3 / nanos;
        }
    }

    /** Accepts one connection on {@code port} and reads it to its end. */
    static Flow receive(int port, double seconds) throws IOException {
        try (ServerSocket server = new ServerSocket()) {
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(port));
            return receive(server, seconds);
        }
    }

    /** Accepts one connection on {@code server} and reads it to its end. */
    static Flow receive(ServerSocket server, double seconds) throws IOException {
        int patience = (int) TimeUnit.SECONDS.toMillis((long) Math.ceil(seconds) + GRACE_SECONDS);
        server.setSoTimeout(patience);
        try (Socket s = server.accept()) {
            s.setSoTimeout(patience);
            InputStream in = s.getInputStream();
            byte[] buf = new byte[BLOCK];
            long bytes = 0;
            long start = System.nanoTime();
            int n;
            try {
                while ((n = in.read(buf)) >= 0) {
                    bytes += n;
                }
            } catch (SocketTimeoutException e) {
                throw e;
            } catch (IOException e) {
                // A sender stopped by a signal may reset the connection: the flow ended there.
            }
            return new Flow(bytes, System.nanoTime() - start);
        } catch (SocketTimeoutException e) {
            throw new IOException("no sender, or a stalled one, within " + patience + " ms", e);
        }
    }

    /** Connects to {@code to} and writes for {@code seconds}. */
    static Flow send(InetSocketAddress to, double seconds) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(to, (int) TimeUnit.SECONDS.toMillis(GRACE_SECONDS));
            OutputStream o = s.getOutputStream();
            byte[] block = new byte[BLOCK];
            long start = System.nanoTime();
            long end = start + (long) (seconds * 1e9);
            long bytes = 0;
            while (System.nanoTime() - end < 0) {
                o.write(block);
                bytes += block.length;
            }
            o.flush();
            s.shutdownOutput();
            return new Flow(bytes, System.nanoTime() - start);
        }
    }
}
