package io.homa.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.xml.parsers.DocumentBuilderFactory;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CompareCommandTest {
    private record Outcome(int code, String out, String err) { }

    private static Outcome compare(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            code = CompareCommand.execute(args, o, e);
        }
        return new Outcome(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    @SuppressWarnings("unchecked")
    void smoke__exitsZero_andWritesBothFiles(@TempDir Path dir) throws Exception {
        Path outDir = dir.resolve("out");
        Outcome r = compare("--smoke", "--out", outDir.toString(), "--background-gbit", "0.5");
        assertEquals(0, r.code(), () -> "stdout:\n" + r.out() + "\nstderr:\n" + r.err());
        assertTrue(r.out().contains("p99.9 us"), r.out());
        assertTrue(r.err().matches("(?s).*\\[ *1/[0-9]+\\] unloaded-100B.*"), "progress on stderr: " + r.err());

        Path json = outDir.resolve("results.json");
        Path svg = outDir.resolve("latency.svg");
        assertTrue(Files.isRegularFile(json));
        assertTrue(Files.isRegularFile(svg));
        Map<String, Object> root = (Map<String, Object>) JsonParser.parse(Files.readString(json));
        Map<String, Object> results = (Map<String, Object>) root.get("results");
        for (String t : List.of("homa", "tcp-single", "tcp-pool", "grpc")) {
            Map<String, Object> byScenario = (Map<String, Object>) results.get(t);
            for (String s : List.of("unloaded-100B", "loaded-100B", "throughput-1MB")) {
                Map<String, Object> fig = (Map<String, Object>) byScenario.get(s);
                assertTrue((Double) fig.get("p50_us") > 0, t + " " + s);
                assertTrue((Double) fig.get("p999_us") >= (Double) fig.get("p50_us"), t + " " + s);
                // CPU time may tick in 10 ms steps: a short smoke run can measure none.
                assertTrue((Double) fig.get("cpu_us_per_call") >= 0, t + " " + s + " cpu");
                assertTrue((Double) fig.get("alloc_bytes_per_call") > 0, t + " " + s + " alloc");
            }
            Map<String, Object> loaded = (Map<String, Object>) byScenario.get("loaded-100B");
            assertTrue((Double) loaded.get("background_gbit_per_s") >= 0, t + " background");
            assertEquals(0.5, loaded.get("background_offered_gbit_per_s"), t + " offered background");
            assertTrue(loaded.get("background_carried") instanceof Boolean, t + " carried");
        }
        Map<String, Object> twoLoops = (Map<String, Object>) results.get("homa-2loops");
        assertEquals(List.of("throughput-1MB"), List.copyOf(twoLoops.keySet()), "homa-2loops runs the throughput scenarios only");
        Map<String, Object> udp = (Map<String, Object>) results.get("udp-raw");
        assertTrue(udp.containsKey("unloaded-100B"));
        assertTrue(!udp.containsKey("loaded-100B"), "udp-raw carries no 1 MB background calls");
        assertTrue(((String) root.get("command")).contains("--smoke"));
        Map<String, Object> machine = (Map<String, Object>) root.get("machine");
        assertTrue(machine.containsKey("load_average_at_start"), machine.toString());
        assertTrue(machine.get("busy_at_start") instanceof Boolean, machine.toString());
        Map<String, Object> ratios = (Map<String, Object>) root.get("ratios");
        assertTrue(ratios.containsKey("homa/tcp-single"), ratios.toString());
        assertTrue(ratios.containsKey("homa/udp-raw"), ratios.toString());
        assertTrue(ratios.containsKey("homa-2loops/homa"), ratios.toString());
        assertEquals(NettyIo.transportName(), ((Map<String, Object>) machine.get("homa_transports")).get("homa-2loops"));

        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(true);
        assertEquals("svg", f.newDocumentBuilder().parse(svg.toFile()).getDocumentElement().getLocalName());
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    @SuppressWarnings("unchecked")
    void incast__everyClientsCallsCounted_blockingClientsLeftOut(@TempDir Path dir) throws Exception {
        Outcome r = compare("--smoke", "--scenarios", "incast-1MB-8clients", "--transports", "homa,tcp-single,tcp-blocking",
                "--repetitions", "1", "--out", dir.toString());
        assertEquals(0, r.code(), () -> "stdout:\n" + r.out() + "\nstderr:\n" + r.err());
        Map<String, Object> root = (Map<String, Object>) JsonParser.parse(Files.readString(dir.resolve("results.json")));
        Map<String, Object> results = (Map<String, Object>) root.get("results");
        for (String t : List.of("homa", "tcp-single")) {
            Map<String, Object> fig = (Map<String, Object>) ((Map<String, Object>) results.get(t)).get("incast-1MB-8clients");
            assertEquals(8.0, ((Number) fig.get("outstanding")).doubleValue(), t);
            assertEquals(1.0, ((Number) fig.get("repetitions_ok")).doubleValue(), t + ": " + fig);
            // The latency samples are rounds; the rate counts every client's calls: 8 per round.
            double rounds = ((Number) fig.get("samples")).doubleValue();
            double seconds = ((Number) ((List<Object>) fig.get("measured_s_per_repetition")).get(0)).doubleValue();
            double calls = ((Number) fig.get("calls_per_s")).doubleValue();
            assertTrue(rounds >= 10, t + ": " + fig);
            assertEquals(8 * rounds, calls * seconds, 0.02 * 8 * rounds, t + ": " + fig);
        }
        Map<String, Object> blocking = (Map<String, Object>) results.get("tcp-blocking");
        assertTrue(blocking == null || !blocking.containsKey("incast-1MB-8clients"), "tcp-blocking's calls cannot start together");
        assertTrue(((Map<String, Object>) ((Map<String, Object>) root.get("ratios")).get("homa/tcp-single"))
                .containsKey("incast-1MB-8clients"));
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    @SuppressWarnings("unchecked")
    void sweep__writesOneCurvePerTransport(@TempDir Path dir) throws Exception {
        Outcome r = compare("--smoke", "--sweep", "--sweep-loads", "0.2,0.5", "--transports", "homa,tcp-single,udp-raw",
                "--out", dir.toString());
        assertEquals(0, r.code(), () -> "stdout:\n" + r.out() + "\nstderr:\n" + r.err());
        Map<String, Object> root = (Map<String, Object>) JsonParser.parse(Files.readString(dir.resolve("sweep.json")));
        Map<String, Object> sweep = (Map<String, Object>) root.get("sweep");
        assertEquals(List.of("homa", "tcp-single"), List.copyOf(sweep.keySet()), "udp-raw has no 1 MB background");
        for (Object curve : sweep.values()) {
            List<Object> points = (List<Object>) curve;
            assertEquals(2, points.size());
            for (Object p : points) {
                Map<String, Object> point = (Map<String, Object>) p;
                assertTrue((Double) point.get("p99_us") > 0, point.toString());
                assertTrue((Double) point.get("background_gbit_per_s") >= 0, point.toString());
            }
        }
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(true);
        assertEquals("svg", f.newDocumentBuilder().parse(dir.resolve("sweep.svg").toFile()).getDocumentElement().getLocalName());
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void badArguments__exitNonZero_withAMessage(@TempDir Path dir) {
        Outcome unknownTransport = compare("--smoke", "--out", dir.toString(), "--transports", "carrier-pigeon");
        assertEquals(2, unknownTransport.code());
        assertTrue(unknownTransport.err().contains("carrier-pigeon"), unknownTransport.err());

        Outcome unknownScenario = compare("--smoke", "--out", dir.toString(), "--scenarios", "nope");
        assertEquals(2, unknownScenario.code());
        assertTrue(unknownScenario.err().contains("nope"));

        Outcome negativeLoad = compare("--smoke", "--out", dir.toString(), "--background-gbit", "-1");
        assertEquals(2, negativeLoad.code());
        assertTrue(negativeLoad.err().contains("positive"), negativeLoad.err());

        Outcome unknownOption = compare("--frobnicate");
        assertNotEquals(0, unknownOption.code());
        assertTrue(unknownOption.err().contains("frobnicate"), unknownOption.err());
    }
}
