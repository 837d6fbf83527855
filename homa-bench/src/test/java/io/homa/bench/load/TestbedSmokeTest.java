package io.homa.bench.load;

import io.homa.bench.JsonParser;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * CI-sized version of the datacenter emulation: a 2-host testbed of its own (prefix and subnet
 * distinct from a developer's testbed), a few seconds of low W4 load through Homa and TCP
 * load-node processes started in the host namespaces, then the report. Needs root and
 * {@code ip netns}; skipped (with the reason) otherwise.
 */
class TestbedSmokeTest {
    private static final String PREFIX = "hst" + (ProcessHandle.current().pid() % 1000);
    private static final String SUBNET = "10.79.0";

    @Test
    void lowLoad_homaAndTcp_completeCallsWithoutFailures(@TempDir Path dir) {
        Path testbed = findTestbed();
        assumeTrue(testbed != null, "skipped: scripts/testbed not found from " + System.getProperty("user.dir"));
        assumeTrue(isRoot() && netnsAvailable(), "skipped: needs root and ip netns (the testbed creates network namespaces)");
        assertTimeoutPreemptively(Duration.ofSeconds(150), () -> {
            try {
                run(testbed, 60, "up", "2", "--rate", "100mbit");
                for (String protocol : List.of("homa", "tcp")) {
                    runNodes(protocol, dir.resolve(protocol));
                }
                int code = LoadReportCommand.execute(new String[]{"--homa", dir.resolve("homa").toString(),
                        "--tcp", dir.resolve("tcp").toString(), "--out", dir.resolve("report").toString()});
                assertEquals(0, code);
                assertTrue(Files.size(dir.resolve("report/report.md")) > 0);
                assertTrue(Files.readString(dir.resolve("report/slowdown.svg")).contains("<svg"));
                @SuppressWarnings("unchecked")
                Map<String, Object> report = (Map<String, Object>) JsonParser.parse(Files.readString(dir.resolve("report/report.json")));
                @SuppressWarnings("unchecked")
                Map<String, Object> unloaded = (Map<String, Object>) report.get("unloadedRttUs");
                assertEquals(150.0, ((Number) unloaded.get("homa")).doubleValue());
                assertTrue(report.containsKey("valid"), "the report states whether the run measured the network");
            } finally {
                run(testbed, 60, "down");
            }
        });
        assertTrue(!namespaces().contains(PREFIX + "-"), "testbed namespaces left behind");
    }

    @Test
    void hostQdiscPrio_givesEachHostEightStrictPriorityQueuesByTos() {
        Path testbed = findTestbed();
        assumeTrue(testbed != null, "skipped: scripts/testbed not found from " + System.getProperty("user.dir"));
        assumeTrue(isRoot() && netnsAvailable(), "skipped: needs root and ip netns (the testbed creates network namespaces)");
        assertTimeoutPreemptively(Duration.ofSeconds(90), () -> {
            try {
                run(testbed, 60, "up", "2", "--rate", "100mbit", "--host-qdisc", "prio");
                String classes = output(List.of("ip", "netns", "exec", PREFIX + "-h1", "tc", "class", "show", "dev", "eth0"));
                String filters = output(List.of("ip", "netns", "exec", PREFIX + "-h1", "tc", "filter", "show", "dev", "eth0"));
                assertTrue(classes != null && filters != null, "tc in the host namespace failed");
                for (int level = 0; level < 8; level++) {
                    assertTrue(classes.contains("class htb 1:" + (10 + level) + " parent 1:1 leaf " + (100 + level) + ": prio " + (7 - level)),
                            "level " + level + " has its leaf, served by priority: " + classes);
                    // u32 shows the TOS match as the IP header's first word: 00LL0000/00e00000
                    assertTrue(filters.matches("(?s).*flowid 1:" + (10 + level) + "\\b[^\\n]*\\n\\s*match 00"
                                    + String.format("%02x", level << 5) + "0000/00e00000 at 0.*"),
                            "TOS " + (level << 5) + " goes to level " + level + "'s leaf: " + filters);
                }
            } finally {
                run(testbed, 60, "down");
            }
        });
    }

    @SuppressWarnings("unchecked")
    private void runNodes(String protocol, Path out) throws Exception {
        int port = protocol.equals("homa") ? 4000 : 4001;
        String servers = SUBNET + ".1:" + port + "," + SUBNET + ".2:" + port;
        Files.createDirectories(out);
        Path startFile = out.resolve("start");
        List<Process> nodes = new ArrayList<>();
        try {
            for (int i = 1; i <= 2; i++) {
                List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", PREFIX + "-h" + i,
                        Paths.get(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m", "-XX:+UseSerialGC",
                        "-cp", System.getProperty("java.class.path"), LoadCommands.class.getName(), "load-node",
                        "--protocol", protocol, "--bind", SUBNET + "." + i + ":" + port, "--servers", servers,
                        "--workload", "w4", "--truncate", "100000", "--gbps", "0.005", "--one-way",
                        "--duration", "2s", "--warmup", "1s", "--drain", "5s", "--linger", "1s",
                        "--link-gbps", "0.1", "--base-rtt-us", "100", "--own-base-rtt-us", protocol.equals("homa") ? "150" : "100",
                        "--start-file", startFile.toString(),
                        "--out", out.resolve("node-" + i + ".json").toString()));
                nodes.add(new ProcessBuilder(cmd).redirectErrorStream(true)
                        .redirectOutput(out.resolveSibling(protocol + "-node-" + i + ".log").toFile()).start());
            }
            releaseWhenReady(startFile, nodes);
            for (Process p : nodes) {
                assertTrue(p.waitFor(60, TimeUnit.SECONDS), protocol + " load-node did not finish in 60 s");
                assertEquals(0, p.exitValue(), protocol + " load-node failed");
            }
        } finally {
            for (Process p : nodes) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
        for (int i = 1; i <= 2; i++) {
            Path f = out.resolve("node-" + i + ".json");
            assertTrue(Files.exists(f), "no results from " + protocol + " node " + i);
            Map<String, Object> json = (Map<String, Object>) JsonParser.parse(Files.readString(f, StandardCharsets.UTF_8));
            Map<String, Object> summary = (Map<String, Object>) json.get("summary");
            assertTrue(((Number) summary.get("completedCalls")).longValue() > 0, protocol + " completed no calls: " + summary);
            assertEquals(0, ((Number) summary.get("failures")).longValue(), protocol + " had failures: " + summary);
            long completed = ((Number) summary.get("completedCalls")).longValue();
            long observed = ((Number) summary.get("sendsObservedInTransport")).longValue();
            if (protocol.equals("tcp")) {
                assertTrue(observed >= completed, "every completed TCP call was seen leaving the transport: " + summary);
            } else {
                assertEquals(0, observed, "Homa's queues are not observable per call: " + summary);
            }
            assertTrue(summary.containsKey("sendsCpuLateOver1ms") && summary.containsKey("validCpu"), summary.toString());
            if (protocol.equals("homa")) {
                Map<String, Object> measured = (Map<String, Object>) json.get("transportMetricsMeasured");
                assertTrue(measured != null && ((Number) measured.get("PACKETS_SENT_DATA")).longValue() > 0,
                        "Homa's counters over the measured interval: " + json.get("transportMetricsMeasured"));
                assertTrue(((Number) json.get("measuredMetricsS")).doubleValue() > 1, "about the 2 s measured: " + json.get("measuredMetricsS"));
            }
        }
    }

    /** The start barrier, as scripts/experiment runs it: once every node is ready, the start time. */
    private static void releaseWhenReady(Path startFile, List<Process> nodes) throws IOException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            long ready;
            try (Stream<Path> s = Files.list(startFile.getParent())) {
                ready = s.filter(f -> f.getFileName().toString().startsWith("start.ready.")).count();
            }
            if (ready == nodes.size()) {
                break;
            }
            assertTrue(nodes.stream().allMatch(Process::isAlive), "a load-node exited before the start");
            assertTrue(System.nanoTime() < until, "only " + ready + " of " + nodes.size() + " load-nodes ready after 60 s");
            LockSupport.parkNanos(50_000_000L);
        }
        Path tmp = startFile.resolveSibling("start.tmp");
        Files.writeString(tmp, String.valueOf(System.currentTimeMillis() + 500), StandardCharsets.UTF_8);
        Files.move(tmp, startFile, StandardCopyOption.ATOMIC_MOVE);
    }

    private static Path findTestbed() {
        for (Path d = Paths.get(System.getProperty("user.dir")).toAbsolutePath(); d != null; d = d.getParent()) {
            Path t = d.resolve("scripts/testbed");
            if (Files.isExecutable(t)) {
                return t;
            }
        }
        return null;
    }

    private static boolean isRoot() {
        return "0".equals(output(List.of("id", "-u")).trim());
    }

    private static boolean netnsAvailable() {
        return output(List.of("ip", "netns", "list")) != null;
    }

    private static String namespaces() {
        String s = output(List.of("ip", "netns", "list"));
        return s == null ? "" : s;
    }

    /** stdout of a short command, or null when it cannot run or fails. */
    private static String output(List<String> cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return null;
            }
            return p.exitValue() == 0 ? out : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private static void run(Path testbed, int seconds, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(testbed.toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        pb.environment().put("TESTBED_PREFIX", PREFIX);
        pb.environment().put("TESTBED_SUBNET", SUBNET);
        Process p = pb.start();
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("testbed " + String.join(" ", args) + " did not finish in " + seconds + " s");
        }
        assertEquals(0, p.exitValue(), "testbed " + String.join(" ", args) + " failed");
    }
}
