package io.homa;

import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The TCP fallback against a real block: the kernel drops UDP to the server's port (an nftables
 * rule), inside a network namespace this test creates ({@code homa-fb-<pid>}) so that nothing
 * outside it is touched. The JVM under test runs in the root namespace, so the server and client
 * run in a child JVM inside the namespace ({@link BlockedPathScenario}), on its loopback.
 *
 * <p>Checked: with UDP to the server dropped, calls complete over TCP within the probe interval
 * plus a TCP round trip, each request runs once; once the rule is gone and the fallback period is
 * over, new calls go over Homa again. Needs Linux, root, {@code ip} and {@code nft}; else skipped
 * with the reason. The namespace is deleted in every case.
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class BlockedPathTest {
    private static final String NAMESPACE = "homa-fb-" + ProcessHandle.current().pid();
    private static final String TABLE = "homa_fb";

    @Test
    void callsCrossABlockedPathOverTcpAndComeBackToHoma() throws Exception {
        assumeTrue(System.getProperty("os.name").startsWith("Linux"), "network namespaces are Linux only");
        assumeTrue(SystemCommands.run("id", "-u").trim().equals("0"), "needs root to create a network namespace");
        assumeTrue(SystemCommands.onPath("ip"), "the ip command (iproute2) is not installed");
        assumeTrue(SystemCommands.onPath("nft"), "nft (nftables) is not installed (.ci/run installs it as root)");
        assumeTrue(SystemCommands.exec("ip", "netns", "add", NAMESPACE) == 0, "cannot create network namespace " + NAMESPACE);
        Process child = null;
        Path log = Files.createTempFile("homa-blocked-path", ".log");
        try {
            assertEquals(0, SystemCommands.exec("ip", "netns", "exec", NAMESPACE, "ip", "link", "set", "lo", "up"));
            assumeTrue(SystemCommands.exec("ip", "netns", "exec", NAMESPACE, "nft", "add", "table", "inet", TABLE) == 0,
                    "nftables does not work in the namespace (no nf_tables in this kernel?)");
            child = startScenario(log);
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            Writer in = new OutputStreamWriter(child.getOutputStream(), StandardCharsets.UTF_8);
            Map<String, String> started = answer(out, log);
            int port = Integer.parseInt(started.get("port"));

            // Homa works: no TCP (after the warm-up, a cold JVM being slower than the probe interval
            // at first; a retry then is refused by the server, which has the request, and ran nothing).
            Map<String, String> open = command(in, out, log, "CALL 5");
            assertEquals("true", open.get("ok"), open.toString());
            assertEquals(started.get("tcpCalls"), open.get("tcpCalls"), open.toString());
            int warm = BlockedPathScenario.WARM_UP;

            // The kernel drops every UDP datagram to the server's port.
            assertEquals(0, nft("add", "chain", "inet", TABLE, "in", "{ type filter hook input priority 0 ; }"));
            assertEquals(0, nft("add", "rule", "inet", TABLE, "in", "udp", "dport", String.valueOf(port), "drop"));
            Map<String, String> blocked = command(in, out, log, "CALL 20");
            assertEquals("true", blocked.get("ok"), blocked.toString());
            long firstMillis = Long.parseLong(blocked.get("firstMillis"));
            long probe = BlockedPathScenario.PROBE.toMillis();
            LoggerFactory.getLogger(BlockedPathTest.class).info("UDP to port {} dropped: the first call took {} ms"
                    + " (probe interval {} ms): {}", port, firstMillis, probe, blocked);
            // The probe interval, one TCP round trip and the time to open a connection on loopback; the
            // margin is for a busy machine (Homa's own silence timeout, 1 s, would end the call instead).
            assertTrue(firstMillis >= probe && firstMillis < probe + 700,
                    "first call over the blocked path took " + firstMillis + " ms (probe interval " + probe + " ms)");
            assertTrue(Long.parseLong(blocked.get("fallbacks")) >= 1, blocked.toString());
            assertEquals(20, Long.parseLong(blocked.get("tcpCalls")) - Long.parseLong(open.get("tcpCalls")),
                    blocked.toString());
            assertEquals(String.valueOf(warm + 25), blocked.get("runs"), "no request ran twice: " + blocked);
            assertEquals(String.valueOf(warm + 25), blocked.get("distinct"), blocked.toString());

            // The rule goes; after the fallback period, new calls probe Homa, which works again.
            assertEquals(0, nft("delete", "table", "inet", TABLE));
            assertEquals("true", command(in, out, log, "AWAIT_HOMA").get("ok"));
            Map<String, String> recovered = command(in, out, log, "CALL 5");
            assertEquals("true", recovered.get("ok"), recovered.toString());
            assertEquals(blocked.get("tcpCalls"), recovered.get("tcpCalls"), "no call went over TCP: " + recovered);
            assertEquals(blocked.get("fallbacks"), recovered.get("fallbacks"), recovered.toString());
            assertEquals(Long.parseLong(blocked.get("homaCalls")) + 5, Long.parseLong(recovered.get("homaCalls")),
                    recovered.toString());
            assertEquals(Long.parseLong(blocked.get("probes")) + 1, Long.parseLong(recovered.get("probes")),
                    "the first call after the period probed Homa: " + recovered);
            assertEquals(String.valueOf(warm + 30), recovered.get("runs"), recovered.toString());
            command(in, out, log, "QUIT");
        } finally {
            if (child != null) {
                child.destroy();
                if (!child.waitFor(10, TimeUnit.SECONDS)) {
                    child.destroyForcibly();
                }
            }
            SystemCommands.exec("ip", "netns", "del", NAMESPACE);
            Files.deleteIfExists(log);
        }
    }

    /** The child JVM in the namespace, on the test's own class path (and module path, flattened). */
    private static Process startScenario(Path log) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", NAMESPACE, SystemCommands.java(), "-Xmx256m",
                "-cp", SystemCommands.testClassPath()));
        String noNative = System.getProperty("io.netty.transport.noNative");
        if (noNative != null) {
            cmd.add("-Dio.netty.transport.noNative=" + noNative);
        }
        cmd.add(BlockedPathScenario.class.getName());
        return new ProcessBuilder(cmd).redirectError(log.toFile()).start();
    }

    private static Map<String, String> command(Writer in, BufferedReader out, Path log, String command) throws IOException {
        in.write(command + "\n");
        in.flush();
        return command.equals("QUIT") ? Map.of() : answer(out, log);
    }

    /** The child's next line as key=value pairs. */
    private static Map<String, String> answer(BufferedReader out, Path log) throws IOException {
        String line = out.readLine();
        assertNotNull(line, "the scenario process ended; its log:\n" + Files.readString(log));
        Map<String, String> m = new HashMap<>();
        for (String kv : line.trim().split(" ")) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                m.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
        }
        return m;
    }

    private static int nft(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", NAMESPACE, "nft"));
        cmd.addAll(List.of(args));
        return SystemCommands.exec(cmd.toArray(new String[0]));
    }



}
