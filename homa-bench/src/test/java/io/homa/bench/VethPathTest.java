package io.homa.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code compare --path veth}: two namespaces joined by a veth pair, made and removed by the
 * command. Needs root (CI runs as root); elsewhere these tests say so and skip.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class VethPathTest {
    private static String run(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(10, TimeUnit.SECONDS);
        return out;
    }

    private static void assumeRoot() {
        assumeTrue(VethPath.permitted(), "the veth path needs root (network namespaces); not root here");
    }

    @Test
    void theLink_hasItsMtuAndAddresses_andNothingIsLeftAfterClose() throws Exception {
        assumeRoot();
        List<String> names;
        try (VethPath v = VethPath.create(1500)) {
            names = v.namespaces();
            String list = run("ip", "netns", "list");
            for (String ns : names) {
                assertTrue(list.contains(ns), list);
            }
            String link = run("ip", "-n", names.get(0), "addr", "show", names.get(0) + "-v");
            assertTrue(link.contains("mtu 1500") && link.contains(v.clientIp() + "/24"), link);
            String ping = run("ip", "netns", "exec", names.get(0), "ping", "-c", "1", "-W", "5", v.serverIp());
            assertTrue(ping.contains("1 received") || ping.contains("not found") || ping.contains("No such file"), ping);
        }
        String after = run("ip", "netns", "list");
        for (String ns : names) {
            assertFalse(after.contains(ns), "left behind: " + after);
        }
    }

    @Test
    void aFailureInTheMiddle_leavesNothingBehind() throws Exception {
        assumeRoot();
        List<String>[] names = new List[1];
        assertThrows(IllegalStateException.class, () -> {
            try (VethPath v = VethPath.create(9000)) {
                names[0] = v.namespaces();
                throw new IllegalStateException("a comparison that failed");
            }
        });
        String after = run("ip", "netns", "list");
        for (String ns : names[0]) {
            assertFalse(after.contains(ns), "left behind: " + after);
        }
        assertThrows(IllegalArgumentException.class, () -> VethPath.create(100), "an MTU below IPv4's minimum");
    }

    @Test
    @SuppressWarnings("unchecked")
    void compareOnTheVethPath_recordsPathMtuAndProcesses(@TempDir Path dir) throws Exception {
        assumeRoot();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            code = CompareCommand.execute(new String[] {"--smoke", "--path", "veth", "--mtu", "1500", "--transports",
                    "homa,tcp-blocking", "--scenarios", "unloaded-100B", "--out", dir.toString()}, o, e);
        }
        assertEquals(0, code, () -> err.toString(StandardCharsets.UTF_8));
        Map<String, Object> root = (Map<String, Object>) JsonParser.parse(Files.readString(dir.resolve("results.json")));
        Map<String, Object> machine = (Map<String, Object>) root.get("machine");
        assertEquals("veth", machine.get("path"));
        assertEquals(1500.0, ((Number) machine.get("mtu")).doubleValue());
        assertEquals(2.0, ((Number) machine.get("processes")).doubleValue());
        Map<String, Object> homa = (Map<String, Object>) ((Map<String, Object>) root.get("results")).get("homa");
        assertTrue(((Number) ((Map<String, Object>) homa.get("unloaded-100B")).get("p50_us")).doubleValue() > 0);
        assertFalse(run("ip", "netns", "list").contains("hbc" + ProcessHandle.current().pid()), "namespaces removed");
    }

    @Test
    void withoutRoot_itSaysSo_andExitsNonZero() {
        assumeTrue(!VethPath.permitted(), "running as root: the refusal cannot be seen here");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            code = CompareCommand.execute(new String[] {"--smoke", "--path", "veth"}, o, e);
        }
        assertEquals(2, code);
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("needs root"));
    }
}
