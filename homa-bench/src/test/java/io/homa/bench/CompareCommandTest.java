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
        Outcome r = compare("--smoke", "--out", outDir.toString());
        assertEquals(0, r.code(), () -> "stdout:\n" + r.out() + "\nstderr:\n" + r.err());
        assertTrue(r.out().contains("p99.9 us"), r.out());
        assertTrue(r.err().matches("(?s).*\\[ *1/[0-9]+\\] unloaded-100B.*"), "progress on stderr: " + r.err());

        Path json = outDir.resolve("results.json");
        Path svg = outDir.resolve("latency.svg");
        assertTrue(Files.isRegularFile(json));
        assertTrue(Files.isRegularFile(svg));
        Map<String, Object> root = (Map<String, Object>) JsonParser.parse(Files.readString(json));
        Map<String, Object> results = (Map<String, Object>) root.get("results");
        for (String t : List.of("homa", "tcp-single", "tcp-pool")) {
            Map<String, Object> byScenario = (Map<String, Object>) results.get(t);
            for (String s : List.of("unloaded-100B", "loaded-100B")) {
                Map<String, Object> fig = (Map<String, Object>) byScenario.get(s);
                assertTrue((Double) fig.get("p50_us") > 0, t + " " + s);
                assertTrue((Double) fig.get("p999_us") >= (Double) fig.get("p50_us"), t + " " + s);
            }
        }
        Map<String, Object> udp = (Map<String, Object>) results.get("udp-raw");
        assertTrue(udp.containsKey("unloaded-100B"));
        assertTrue(!udp.containsKey("loaded-100B"), "udp-raw carries no 1 MB background calls");
        assertTrue(((String) root.get("command")).contains("--smoke"));
        assertTrue(root.get("machine") instanceof Map);
        Map<String, Object> ratios = (Map<String, Object>) root.get("ratios");
        assertTrue(ratios.containsKey("homa/tcp-single"), ratios.toString());
        assertTrue(ratios.containsKey("homa/udp-raw"), ratios.toString());

        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(true);
        assertEquals("svg", f.newDocumentBuilder().parse(svg.toFile()).getDocumentElement().getLocalName());
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

        Outcome unknownOption = compare("--frobnicate");
        assertNotEquals(0, unknownOption.code());
        assertTrue(unknownOption.err().contains("frobnicate"), unknownOption.err());
    }
}
