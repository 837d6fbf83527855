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
    /** Background of a loaded run: 2 Gbit/s offered, {@code achieved} carried (500 calls arrived). */
    static PoissonLoad.Interval background(double achieved) {
        return new PoissonLoad.Interval(2.0, 2.0, achieved, 500, 0, Math.round(500 * achieved / 2.0));
    }

    static RunResult run(String transport, Scenario s, int rep, double p50, double p99, double p999, double gbit,
                         double achievedBackground) {
        return new RunResult(transport, s, rep, new LatencyStats(1000, p50, p99, p999, p999 * 2, p50 * 1.1),
                1e6 / p50, gbit, s.kind() == Scenario.Kind.LOADED ? background(achievedBackground) : null,
                p50 / 3, 1000 + p50, 1.5, 1.0, null, 12);
    }

    static CompareReport sample(boolean withHoma) {
        List<Summary> summaries = new ArrayList<>();
        List<String> transports = new ArrayList<>(List.of("tcp-single", "tcp-pool", "udp-raw", "grpc"));
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
                    // grpc does not carry the offered background here: 1.2 of 2 Gbit/s.
                    runs.add(run(t, s, rep, base * f + rep, base * f * 3 + rep, base * f * 9 + rep, 1.5 * f,
                            t.equals("grpc") ? 1.2 : 2.0));
                }
                summaries.add(Summary.of(t, s, runs));
            }
        }
        // One failed run: must not break the output.
        summaries.add(Summary.of("tcp-pool", Scenario.UNLOADED_10KB, List.of(new RunResult("tcp-pool",
                Scenario.UNLOADED_10KB, 0, LatencyStats.of(LatencyStats.newHistogram()), Double.NaN, Double.NaN,
                null, Double.NaN, Double.NaN, Double.NaN, 0.1, "call of 10000 bytes got no reply \"quoted\"\n", Double.NaN))));
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
        assertEquals(List.of("homa", "tcp-single", "tcp-pool", "udp-raw", "grpc"), new ArrayList<>(results.keySet()));
        for (Map.Entry<String, Object> t : results.entrySet()) {
            for (Map.Entry<String, Object> s : map(t.getValue(), t.getKey()).entrySet()) {
                Map<String, Object> figures = map(s.getValue(), t.getKey() + "/" + s.getKey());
                for (String k : List.of("p50_us", "p99_us", "p999_us", "cpu_us_per_call", "alloc_bytes_per_call", "jit_ms")) {
                    assertInstanceOf(Double.class, figures.get(k), t.getKey() + " " + s.getKey() + " " + k);
                    assertTrue((Double) figures.get(k) > 0);
                }
                assertEquals(s.getKey().startsWith("loaded"), figures.containsKey("background_gbit_per_s"),
                        "background only where there is one: " + s.getKey());
            }
        }
        Map<String, Object> homaLoaded = map(map(results.get("homa"), "homa").get("loaded-100B"), "homa loaded");
        assertEquals(2.0, homaLoaded.get("background_gbit_per_s"));
        assertEquals(2.0, homaLoaded.get("background_offered_gbit_per_s"));
        assertEquals(Boolean.TRUE, homaLoaded.get("background_carried"));
        Map<String, Object> grpcLoaded = map(map(results.get("grpc"), "grpc").get("loaded-100B"), "grpc loaded");
        assertEquals(1.2, grpcLoaded.get("background_gbit_per_s"));
        assertEquals(Boolean.FALSE, grpcLoaded.get("background_carried"), "1.2 of 2 Gbit/s is not carrying it");
        assertEquals((30 * 1.3 + 1) / 3, (Double) map(map(results.get("homa"), "homa").get("unloaded-100B"), "")
                .get("cpu_us_per_call"), 1e-3, "median of 3");
        Map<String, Object> homa = map(results.get("homa"), "homa");
        assertTrue(homa.keySet().containsAll(List.of("unloaded-100B", "loaded-100B")));
        assertEquals(30 * 1.3 + 1, (Double) map(homa.get("unloaded-100B"), "").get("p50_us"), 1e-3, "median of 3");
        assertFalse(map(results.get("tcp-pool"), "tcp-pool").containsKey("unloaded-10KB"), "failed runs have no figures");
        assertEquals(1, map(results.get("udp-raw"), "udp-raw").size());

        Map<String, Object> ratios = map(root.get("ratios"), "ratios");
        Map<String, Object> vsSingle = map(ratios.get("homa/tcp-single"), "homa/tcp-single");
        double p50 = (Double) map(vsSingle.get("unloaded-100B"), "").get("p50");
        assertEquals((30 * 1.3 + 1) / (30 * 1.3 * 1.3 + 1), p50, 1e-3);
        // The spread over the repetitions, each paired with the same repetition of the other.
        List<Object> range = (List<Object>) map(vsSingle.get("unloaded-100B"), "").get("p50_range");
        assertEquals((30 * 1.3) / (30 * 1.3 * 1.3), (Double) range.get(0), 1e-3);
        assertEquals((30 * 1.3 + 2) / (30 * 1.3 * 1.3 + 2), (Double) range.get(1), 1e-3);
        assertTrue(ratios.containsKey("homa/grpc"));
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
        for (String t : List.of("homa", "tcp-single", "tcp-pool", "udp-raw", "grpc", "loaded-100B", "Targets", "FAILED",
                "cpu us/c", "alloc B/c", "NOT CARRIED", "homa/grpc")) {
            assertTrue(table.contains(t), t + " in\n" + table);
        }
        // Ratios show their min-max over the repetitions.
        assertTrue(table.matches("(?s).*homa/tcp-single.*unloaded-100B +[0-9.]+ \\([0-9.]+-[0-9.]+\\).*"), table);
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

    @Test
    @SuppressWarnings("unchecked")
    void sweep__jsonAndChart_markTheLoadsNotCarried() throws Exception {
        Map<String, List<LoadSweep.Point>> curves = new LinkedHashMap<>();
        for (String t : List.of("homa", "tcp-single")) {
            List<LoadSweep.Point> points = new ArrayList<>();
            for (double load : List.of(1.0, 2.0, 4.0)) {
                boolean carried = !(t.equals("homa") && load == 4.0);
                RunResult r = run(t, Scenario.LOADED_100B, 0, 20 * load, 60 * load, 90 * load, Double.NaN,
                        carried ? 2.0 : 1.0);
                points.add(new LoadSweep.Point(load, Summary.of(t, Scenario.LOADED_100B, List.of(r))));
            }
            curves.put(t, points);
        }
        LoadSweep sweep = new LoadSweep(curves, new LinkedHashMap<>(), "compare --sweep");
        Map<String, Object> root = map(JsonParser.parse(Json.write(sweep.toJson())), "root");
        Map<String, Object> byTransport = map(root.get("sweep"), "sweep");
        assertEquals(List.of("homa", "tcp-single"), new ArrayList<>(byTransport.keySet()));
        List<Object> homa = (List<Object>) byTransport.get("homa");
        assertEquals(3, homa.size());
        Map<String, Object> last = map(homa.get(2), "homa at 4");
        assertEquals(4.0, last.get("background_offered_gbit_per_s"));
        assertEquals(Boolean.FALSE, last.get("background_carried"));
        assertEquals(240.0, last.get("p99_us"));
        assertTrue(sweep.table().contains("NOT CARRIED"));

        Document doc = parseXml(SweepChart.svg(sweep, "sub"));
        assertEquals(2 * 2, doc.getElementsByTagNameNS("http://www.w3.org/2000/svg", "polyline").getLength(),
                "p99 and p50 per transport");
        int hollow = 0;
        org.w3c.dom.NodeList circles = doc.getElementsByTagNameNS("http://www.w3.org/2000/svg", "circle");
        for (int i = 0; i < circles.getLength(); i++) {
            if ("#ffffff".equals(((Element) circles.item(i)).getAttribute("fill"))) {
                hollow++;
            }
        }
        assertEquals(1, hollow, "one point did not carry its load");
    }
}
