package io.homa.bench;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;

import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** results.json and latency.svg from made-up figures: shape, validity, ratios. */
@org.junit.jupiter.api.Timeout(value = 30, unit = java.util.concurrent.TimeUnit.SECONDS)
class ReportOutputTest {
    private static RunResult run(String transport, Scenario s, double p50, double p99, double p999, double gbit) {
        return new RunResult(transport, s, 0, new LatencyStats(1000, p50, p99, p999, p999 * 2, p50 * 1.1),
                1e6 / p50, gbit, s.kind() == Scenario.Kind.LOADED ? 3.5 : Double.NaN, 1.0, null);
    }

    static CompareReport sample(boolean withHoma) {
        List<Summary> summaries = new ArrayList<>();
        List<String> transports = new ArrayList<>(List.of("tcp-single", "tcp-pool", "udp-raw"));
        if (withHoma) {
            transports.add(0, "homa");
        }
        double f = 1;
        for (String t : transports) {
            f *= 1.3;
            for (Scenario s : List.of(Scenario.UNLOADED_100B, Scenario.UNLOADED_1MB, Scenario.LOADED_100B,
                    Scenario.THROUGHPUT_1MB)) {
                if (t.equals("udp-raw") && s != Scenario.UNLOADED_100B) {
                    continue;
                }
                List<RunResult> runs = new ArrayList<>();
                for (int rep = 0; rep < 3; rep++) {
                    double base = s.size() > 1000 ? 900 : 30;
                    runs.add(run(t, s, base * f + rep, base * f * 3 + rep, base * f * 9 + rep, 1.5 * f));
                }
                summaries.add(Summary.of(t, s, runs));
            }
        }
        // One failed run: must not break the output.
        summaries.add(Summary.of("tcp-pool", Scenario.UNLOADED_10KB, List.of(new RunResult("tcp-pool",
                Scenario.UNLOADED_10KB, 0, LatencyStats.of(LatencyStats.newHistogram()), Double.NaN, Double.NaN,
                Double.NaN, 0.1, "call of 10000 bytes got no reply \"quoted\"\n"))));
        Map<String, Object> machine = new LinkedHashMap<>();
        machine.put("os", "Linux \"test\"");
        machine.put("cpus", 2);
        machine.put("load", Double.NaN);
        return new CompareReport(summaries, machine, "java -jar homa-bench.jar compare --quick --out \"x y\"");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o, String what) {
        assertInstanceOf(Map.class, o, what + " is an object");
        return (Map<String, Object>) o;
    }

    @Test
    @SuppressWarnings("unchecked")
    void json__parsesBack_withTheDocumentedShape() {
        CompareReport report = sample(true);
        Object parsed = JsonParser.parse(Json.write(report.toJson()));
        Map<String, Object> root = map(parsed, "root");
        assertEquals(List.of("results", "ratios", "machine", "command"), new ArrayList<>(root.keySet()));
        Map<String, Object> results = map(root.get("results"), "results");
        assertEquals(List.of("homa", "tcp-single", "tcp-pool", "udp-raw"), new ArrayList<>(results.keySet()));
        for (Map.Entry<String, Object> t : results.entrySet()) {
            for (Map.Entry<String, Object> s : map(t.getValue(), t.getKey()).entrySet()) {
                Map<String, Object> figures = map(s.getValue(), t.getKey() + "/" + s.getKey());
                for (String k : List.of("p50_us", "p99_us", "p999_us")) {
                    assertInstanceOf(Double.class, figures.get(k), t.getKey() + " " + s.getKey() + " " + k);
                    assertTrue((Double) figures.get(k) > 0);
                }
            }
        }
        Map<String, Object> homa = map(results.get("homa"), "homa");
        assertTrue(homa.keySet().containsAll(List.of("unloaded-100B", "loaded-100B")));
        assertEquals(30 * 1.3 + 1, (Double) map(homa.get("unloaded-100B"), "").get("p50_us"), 1e-3, "median of 3");
        assertFalse(map(results.get("tcp-pool"), "tcp-pool").containsKey("unloaded-10KB"), "failed runs have no figures");
        assertEquals(1, map(results.get("udp-raw"), "udp-raw").size());

        Map<String, Object> ratios = map(root.get("ratios"), "ratios");
        Map<String, Object> vsSingle = map(ratios.get("homa/tcp-single"), "homa/tcp-single");
        double p50 = (Double) map(vsSingle.get("unloaded-100B"), "").get("p50");
        assertEquals((30 * 1.3 + 1) / (30 * 1.3 * 1.3 + 1), p50, 1e-3);
        assertTrue(map(vsSingle.get("throughput-1MB"), "").containsKey("gbit_per_s"));
        assertTrue(ratios.containsKey("homa/tcp-pool"));
        assertTrue(ratios.containsKey("homa/udp-raw"));
        assertTrue(ratios.containsKey("homa loaded/unloaded"));
        Map<String, Object> targets = map(ratios.get("targets"), "targets");
        assertInstanceOf(Boolean.class, map(targets.get("loaded-100B p99 homa/tcp-single"), "").get("met"));

        Map<String, Object> machine = map(root.get("machine"), "machine");
        assertEquals("Linux \"test\"", machine.get("os"));
        assertNull(machine.get("load"), "NaN is written as null");
        assertEquals("java -jar homa-bench.jar compare --quick --out \"x y\"", root.get("command"));
    }

    @Test
    void json__withoutHoma_hasNoHomaRatios() {
        Map<String, Object> root = map(JsonParser.parse(Json.write(sample(false).toJson())), "root");
        Map<String, Object> ratios = map(root.get("ratios"), "ratios");
        assertFalse(ratios.containsKey("homa/tcp-single"));
        assertTrue(ratios.containsKey("tcp-single/tcp-pool"));
        assertFalse(map(root.get("results"), "results").containsKey("homa"));
    }

    @Test
    void json__writesEveryKindOfValue() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("s", "a\"b\\c\n\u0001é");
        m.put("i", 42);
        m.put("d", 0.125);
        m.put("big", 1.5e12);
        m.put("nan", Double.NaN);
        m.put("inf", Double.POSITIVE_INFINITY);
        m.put("b", true);
        m.put("nul", null);
        m.put("list", List.of(1, "x", List.of()));
        m.put("empty", Map.of());
        Map<String, Object> back = map(JsonParser.parse(Json.write(m)), "root");
        assertEquals("a\"b\\c\n\u0001é", back.get("s"));
        assertEquals(42.0, back.get("i"));
        assertEquals(0.125, back.get("d"));
        assertEquals(1.5e12, back.get("big"));
        assertNull(back.get("nan"));
        assertNull(back.get("inf"));
        assertEquals(Boolean.TRUE, back.get("b"));
        assertTrue(back.containsKey("nul"));
        assertEquals(List.of(1.0, "x", List.of()), back.get("list"));
        assertThrows(IllegalArgumentException.class, () -> Json.write(Map.of("x", new Object())));
        assertThrows(IllegalArgumentException.class, () -> JsonParser.parse("{\"a\": 1,}"));
    }

    private static Document parseXml(String svg) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(true);
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        DocumentBuilder b = f.newDocumentBuilder();
        return b.parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void svg__isWellFormed_withAMarkerPerPercentile() throws Exception {
        CompareReport report = sample(true);
        Document doc = parseXml(LatencyChart.svg(report, "test <machine> & \"co\""));
        Element root = doc.getDocumentElement();
        assertEquals("svg", root.getLocalName());
        assertEquals("http://www.w3.org/2000/svg", root.getNamespaceURI());
        // p50 circles: one per measured latency (transport, scenario) pair, plus one in the legend.
        int measured = 0;
        for (String t : report.results().keySet()) {
            for (Scenario s : report.scenarios()) {
                if (s.isLatency() && report.get(t, s) != null) {
                    measured++;
                }
            }
        }
        assertEquals(measured + 1, doc.getElementsByTagNameNS("http://www.w3.org/2000/svg", "circle").getLength());
        String all = root.getTextContent();
        assertTrue(all.contains("loaded-100B"));
        assertTrue(all.contains("homa"));
        assertTrue(all.contains("test <machine> & \"co\""));
    }

    @Test
    void svg__emptyReport_isStillWellFormed() throws Exception {
        CompareReport empty = new CompareReport(List.of(), new LinkedHashMap<>(), "compare");
        assertEquals("svg", parseXml(LatencyChart.svg(empty, "")).getDocumentElement().getLocalName());
        assertEquals("{}", Json.write(empty.ratios()).trim());
    }

    @Test
    void table__showsEveryTransport_andTheTargets() {
        String table = sample(true).table();
        for (String t : List.of("homa", "tcp-single", "tcp-pool", "udp-raw", "loaded-100B", "Targets", "FAILED")) {
            assertTrue(table.contains(t), t + " in\n" + table);
        }
        assertTrue(sample(false).table().contains("homa was not measured"));
    }

    @Test
    void latencyLabels_areReadable() {
        assertEquals("850 \u00b5s", LatencyChart.duration(850));
        assertEquals("1.2 ms", LatencyChart.duration(1200));
        assertEquals("12.5 ms", LatencyChart.duration(12_500));
        assertEquals("3 s", LatencyChart.duration(3_000_000));
        assertEquals("21.3 \u00b5s", LatencyChart.duration(21.3));
    }
}
