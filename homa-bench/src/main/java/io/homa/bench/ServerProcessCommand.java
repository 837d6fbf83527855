package io.homa.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * The far side of {@code compare --processes 2}: a JVM that runs the echo servers of one transport
 * for the comparing process, one at a time, driven line by line over its standard input
 * ({@link ServerProcess} is the other end). It lives for the whole comparison, so its code is as
 * warm as it would be in a long-running server. Commands, each answered on standard output:
 * <pre>
 * START   -> READY host port   starts a server on {@link NettyIo#HOST} and an ephemeral port
 * BEGIN   -> OK           starts measuring this process's cost
 * END     -> COST cpuNanos allocatedBytes wallNanos compileMillis   since BEGIN (-1: unknown)
 * STOP    -> STOPPED      closes the server
 * QUIT or end of input    closes everything and exits
 * </pre>
 * Anything else is answered with {@code ERROR ...}. Usage: {@code homa-bench.jar echo-server
 * --transport NAME}.
 */
public final class ServerProcessCommand {
    private ServerProcessCommand() {
    }

    public static int execute(String[] args, java.io.InputStream stdin, PrintStream stdout) {
        if (args.length != 2 || !args[0].equals("--transport")) {
            stdout.println("ERROR usage: echo-server --transport NAME");
            return 2;
        }
        Transport transport;
        try {
            transport = Transports.create(args[1]);
        } catch (IllegalArgumentException e) {
            stdout.println("ERROR " + e.getMessage());
            return 2;
        }
        EchoServer server = null;
        CostMeter meter = null;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(stdin, StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                switch (line.trim()) {
                    case "START" -> {
                        if (server != null) {
                            server.close();
                        }
                        server = transport.startServer();
                        stdout.println("READY " + server.address().getAddress().getHostAddress() + " "
                                + server.address().getPort());
                    }
                    case "BEGIN" -> {
                        meter = CostMeter.start();
                        stdout.println("OK");
                    }
                    case "END" -> {
                        CostMeter.Cost c = meter == null ? new CostMeter.Cost(-1, -1, 0, -1) : meter.stop();
                        meter = null;
                        stdout.println(String.format(Locale.ROOT, "COST %d %d %d %d", c.cpuNanos(), c.allocatedBytes(),
                                c.wallNanos(), c.compileMillis()));
                    }
                    case "STOP" -> {
                        if (server != null) {
                            server.close();
                            server = null;
                        }
                        stdout.println("STOPPED");
                    }
                    case "QUIT" -> {
                        return 0;
                    }
                    default -> stdout.println("ERROR unknown command: " + line);
                }
                stdout.flush();
            }
            return 0;
        } catch (IOException | RuntimeException e) {
            stdout.println("ERROR " + e);
            return 1;
        } finally {
            if (server != null) {
                server.close();
            }
        }
    }
}
