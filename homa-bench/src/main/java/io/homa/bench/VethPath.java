package io.homa.bench;

import java.io.IOException;
import java.util.List;

/**
 * {@code compare --path veth}: two network namespaces of our own joined by one veth pair at a
 * chosen MTU, the client's and the server's, as two hosts on one link (no qdisc beyond the
 * kernel's default). Only the two addresses on that link carry traffic (10.199.N.1 and .2, N from
 * this process's id). {@link #close()} deletes both namespaces, which deletes the veth pair with
 * them; a shutdown hook does the same if the JVM ends first, so nothing is left behind. Needs root.
 */
final class VethPath implements AutoCloseable {
    private final String clientNs;
    private final String serverNs;
    private final String clientIp;
    private final String serverIp;
    private final int mtu;
    private final Thread cleanup;
    private boolean closed;

    private VethPath(long id, int mtu) {
        this.clientNs = "hbc" + id;
        this.serverNs = "hbs" + id;
        int subnet = (int) (id % 250) + 1;
        this.clientIp = "10.199." + subnet + ".1";
        this.serverIp = "10.199." + subnet + ".2";
        this.mtu = mtu;
        this.cleanup = new Thread(this::deleteNamespaces, "veth-path-cleanup");
    }

    /** Whether this process may create namespaces (it runs as root). */
    static boolean permitted() {
        try {
            SystemCommand id = SystemCommand.run("id", "-u");
            return id.ok() && id.output().equals("0");
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Creates the namespaces and the link.
     *
     * @throws IllegalStateException naming the command that failed (what it made is removed first)
     */
    static VethPath create(int mtu) {
        if (mtu < 576 || mtu > 65_535) {
            throw new IllegalArgumentException("MTU must be 576..65535, was " + mtu);
        }
        VethPath v = new VethPath(ProcessHandle.current().pid(), mtu);
        Runtime.getRuntime().addShutdownHook(v.cleanup);
        try {
            v.setUp();
        } catch (RuntimeException e) {
            v.close();
            throw e;
        }
        return v;
    }

    private void setUp() {
        String a = clientNs + "-v";
        String b = serverNs + "-v";
        run("ip", "netns", "add", clientNs);
        run("ip", "netns", "add", serverNs);
        run("ip", "link", "add", a, "netns", clientNs, "type", "veth", "peer", "name", b, "netns", serverNs);
        for (String[] end : new String[][] {{clientNs, a, clientIp}, {serverNs, b, serverIp}}) {
            run("ip", "-n", end[0], "link", "set", "lo", "up");
            run("ip", "-n", end[0], "link", "set", end[1], "mtu", String.valueOf(mtu));
            run("ip", "-n", end[0], "addr", "add", end[2] + "/24", "dev", end[1]);
            run("ip", "-n", end[0], "link", "set", end[1], "up");
        }
    }

    /** The command prefix that runs a program in network namespace {@code ns}. */
    static List<String> inNamespace(String ns) {
        return List.of("ip", "netns", "exec", ns);
    }

    /** The command prefix that runs a program in the client's namespace. */
    List<String> inClient() {
        return inNamespace(clientNs);
    }

    String clientIp() {
        return clientIp;
    }

    String serverIp() {
        return serverIp;
    }

    int mtu() {
        return mtu;
    }

    /** The namespaces' names (for tests that check nothing is left). */
    List<String> namespaces() {
        return List.of(clientNs, serverNs);
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        deleteNamespaces();
        try {
            Runtime.getRuntime().removeShutdownHook(cleanup);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook runs anyway, and deleting twice is harmless
        }
    }

    private void deleteNamespaces() {
        for (String ns : List.of(clientNs, serverNs)) {
            try {
                SystemCommand.run("ip", "netns", "del", ns); // fails when it is gone already: fine
            } catch (IOException e) {
                // nothing to delete
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void run(String... cmd) {
        String c = String.join(" ", cmd);
        try {
            SystemCommand r = SystemCommand.run(cmd);
            if (!r.ok()) {
                throw new IllegalStateException("'" + c + "' failed: " + r.output());
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run '" + c + "': " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running '" + c + "'", e);
        }
    }
}
