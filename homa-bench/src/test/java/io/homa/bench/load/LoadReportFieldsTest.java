package io.homa.bench.load;

import io.homa.bench.JsonParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * load-report on synthetic node results: both slowdown bases and the unloaded RTTs, the CPU
 * validity mark, the "did not carry the load" mark, in the JSON, the markdown and the chart; and
 * {@code --runs} turning several experiment folders into ranges.
 */
class LoadReportFieldsTest {
    private static final SizeDistribution SIZES = SizeDistribution.parse("fixed:100", 0);
    private static final double LINK_GBPS = 0.1;
    private static final double SHARED_BASE = 100;

    @TempDir
    Path root;

    /**
     * One node's results file: {@code calls} calls of 100 B, each taking {@code rttUs}, of which
     * {@code completed} completed, {@code cpuLate} sent over 1 ms late for the CPU.
     */
    private static void node(Path file, String protocol, double load, double ownBase, double rttUs,
                             long calls, long completed, long cpuLate) throws Exception {
        LoadRecorder rec = new LoadRecorder(SIZES, SHARED_BASE, ownBase, LINK_GBPS);
        for (long i = 0; i < completed; i++) {
            rec.success(100, (long) (rttUs * 1000));
        }
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("workload", "fixed:100");
        settings.put("truncate", 0);
        settings.put("gbps", load * LINK_GBPS);
        settings.put("durationS", 10.0);
        settings.put("oneWay", true);
        settings.put("linkGbps", LINK_GBPS);
        settings.put("baseRttUs", SHARED_BASE);
        settings.put("ownBaseRttUs", ownBase);
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("offeredCalls", calls);
        summary.put("offeredGbps", load * LINK_GBPS);
        summary.put("offeredBytes", calls * 100);
        summary.put("completedCalls", completed);
        summary.put("completedGbps", load * LINK_GBPS * completed / calls);
        summary.put("completedBytes", completed * 100);
        summary.put("failures", calls - completed);
        summary.put("sendsCpuLateOver1ms", cpuLate);
        summary.put("cpuLateFraction", (double) cpuLate / calls);
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("protocol", protocol);
        json.put("settings", settings);
        json.put("summary", summary);
        json.put("transportMetrics", Map.of("RESEND_SENT", 7));
        json.put("buckets", rec.bucketsJson());
        LoadNodeCommand.write(file, json);
    }

    /** A load's folder with two nodes per protocol; Homa's own unloaded RTT is 200 us, TCP's 100 us. */
    private Path loadRun(Path dir, double load, long homaCompleted, long homaCpuLate, double homaRttUs) throws Exception {
        for (int i = 1; i <= 2; i++) {
            node(dir.resolve("homa/node-" + i + ".json"), "homa", load, 200, homaRttUs, 1000, homaCompleted, homaCpuLate);
            node(dir.resolve("tcp/node-" + i + ".json"), "tcp", load, 100, 5000, 1000, 1000, 0);
        }
        assertEquals(0, LoadReportCommand.execute(new String[] {"--homa", dir.resolve("homa").toString(),
                "--tcp", dir.resolve("tcp").toString(), "--out", dir.toString()}));
        return dir;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> json(Path f) throws Exception {
        return (Map<String, Object>) JsonParser.parse(Files.readString(f, StandardCharsets.UTF_8));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> summary(Map<String, Object> report, String protocol) {
        return (Map<String, Object>) ((Map<String, Object>) ((Map<String, Object>) report.get("protocols")).get(protocol)).get("summary");
    }

    private static double num(Object o) {
        return ((Number) o).doubleValue();
    }

    @Test
    @SuppressWarnings("unchecked")
    void bothBases_andTheUnloadedRtts_areReported() throws Exception {
        Path dir = loadRun(root.resolve("load-50"), 0.5, 1000, 0, 1000);
        Map<String, Object> r = json(dir.resolve("report.json"));
        assertEquals(SHARED_BASE, num(r.get("baseRttUs")));
        Map<String, Object> unloaded = (Map<String, Object>) r.get("unloadedRttUs");
        assertEquals(200.0, num(unloaded.get("homa")));
        assertEquals(100.0, num(unloaded.get("tcp")));
        Map<String, Object> homa = summary(r, "homa");
        // 1000 us over (base + 100 B x 8 / 0.1 Gbit/s = base + 8 us)
        assertEquals(1000.0 / 108, num(homa.get("shortP99Slowdown")), 0.01 * 1000 / 108);
        assertEquals(1000.0 / 208, num(homa.get("shortP99OwnSlowdown")), 0.01 * 1000 / 208);
        assertEquals(200.0, num(homa.get("unloadedRttUs")));
        Map<String, Object> tcp = summary(r, "tcp");
        assertEquals(num(tcp.get("shortP99Slowdown")), num(tcp.get("shortP99OwnSlowdown")), 1e-9,
                "TCP's own base is the shared one here");
        Map<String, Object> row = (Map<String, Object>) ((List<Object>) r.get("comparison")).get(0);
        assertEquals(1000.0 / 208, num(row.get("homaP99OwnSlowdown")), 0.01 * 1000 / 208);
        Map<String, Object> homaRun = (Map<String, Object>) ((Map<String, Object>) r.get("protocols")).get("homa");
        assertEquals(14.0, num(((Map<String, Object>) homaRun.get("transportMetrics")).get("RESEND_SENT")), "counters summed over nodes");
        assertEquals(true, r.get("valid"));
        assertEquals(true, homa.get("carriedOfferedLoad"));

        String md = Files.readString(dir.resolve("report.md"));
        assertTrue(md.contains("Homa 200 us, TCP 100 us"), md);
        assertTrue(md.contains("own base"), md);
        assertFalse(md.contains("INVALID"), md);
        String svg = Files.readString(dir.resolve("slowdown.svg"));
        assertTrue(svg.contains("Homa p99, own base 200 us"), svg);
        assertTrue(svg.contains("stroke-dasharray"), "own-base curves are dashed");
        assertTrue(svg.contains("Homa: completed 1.000 of calls, 1.000 of bytes, 0 failures"), svg);
    }

    @Test
    void homaCounters_overTheMeasuredInterval_giveGrantsPerDataAndPacerRates() throws Exception {
        Path dir = root.resolve("load-90");
        for (int i = 1; i <= 2; i++) {
            node(dir.resolve("homa/node-" + i + ".json"), "homa", 0.9, 200, 1000, 1000, 1000, 0);
            node(dir.resolve("tcp/node-" + i + ".json"), "tcp", 0.9, 100, 5000, 1000, 1000, 0);
            Path f = dir.resolve("homa/node-" + i + ".json");
            Map<String, Object> j = json(f);
            // whole run (warm-up and drain included) vs the 10 s measured
            j.put("transportMetrics", Map.of("PACKETS_SENT_DATA", 9_000, "PACKETS_SENT_GRANT", 9_000));
            j.put("measuredMetricsS", 10.0);
            j.put("transportMetricsMeasured", Map.of("PACKETS_SENT_DATA", 4_000, "PACKETS_SENT_GRANT", 1_000,
                    "PACER_HOLDS", 500 * i, "PACER_WAKEUPS", 100, "PACER_WAKEUP_LATE_NANOS", 100 * 30_000,
                    "shell.RECEIVE_DEFERRED", 20));
            LoadNodeCommand.write(f, j);
        }
        assertEquals(0, LoadReportCommand.execute(new String[] {"--homa", dir.resolve("homa").toString(),
                "--tcp", dir.resolve("tcp").toString(), "--out", dir.toString()}));
        Map<String, Object> homa = summary(json(dir.resolve("report.json")), "homa");
        assertEquals(0.25, num(homa.get("grantsPerData")), 1e-12, "from the measured interval, not the whole run");
        assertEquals(1500.0 / 20, num(homa.get("pacerHoldsPerNodePerS")), 1e-9);
        assertEquals(10.0, num(homa.get("pacerWakeupsPerNodePerS")), 1e-9);
        assertEquals(30.0, num(homa.get("pacerWakeupLateUs")), 1e-9);
        assertEquals(2.0, num(homa.get("receiveDeferredPerNodePerS")), 1e-9);
        assertFalse(summary(json(dir.resolve("report.json")), "tcp").containsKey("grantsPerData"), "TCP has no Homa counters");
        String md = Files.readString(dir.resolve("report.md"));
        assertTrue(md.contains("Homa's counters over the measured interval: GRANT/DATA packets sent 0.25; per node per second:"
                + " pacer holds 75.0, pacer wake-ups 10.0 (late by 30.0 us on average)"), md);
        assertFalse(md.contains("TCP's counters"), md);

        assertEquals(0, LoadReportCommand.execute(new String[] {"--sweep", dir.toString(), "--out", root.toString()}));
        String sweep = Files.readString(root.resolve("sweep.md"));
        assertTrue(sweep.contains("| 0.25 | 75.0 | 10.0 | ok |"), sweep);
        assertTrue(sweep.contains("| - | - | - | ok |"), "no Homa counters for TCP: " + sweep);
    }

    @Test
    void cpuLateRun_isInvalid_andAShortfall_isMarked() throws Exception {
        // Homa: 900 of 1000 calls per node completed, 20 sends per node CPU-late (2%)
        Path dir = loadRun(root.resolve("load-80"), 0.8, 900, 20, 1000);
        Map<String, Object> r = json(dir.resolve("report.json"));
        assertEquals(false, r.get("valid"));
        Map<String, Object> homa = summary(r, "homa");
        assertEquals(0.02, num(homa.get("cpuLateFraction")), 1e-12);
        assertEquals(false, homa.get("validCpu"));
        assertEquals(false, homa.get("carriedOfferedLoad"));
        assertEquals(0.9, num(homa.get("completedBytesOverOffered")), 1e-9);
        assertEquals(true, summary(r, "tcp").get("validCpu"));

        String md = Files.readString(dir.resolve("report.md"));
        assertTrue(md.contains("This run is not valid"), md);
        assertTrue(md.contains("INVALID: measures the CPU (2.00% of sends > 1 ms late"), md);
        assertTrue(md.contains("DID NOT CARRY THE OFFERED LOAD"), md);
        String svg = Files.readString(dir.resolve("slowdown.svg"));
        assertTrue(svg.contains("Homa p99 (!)"), svg);
        assertTrue(svg.contains("Homa: completed 0.900 of calls, 0.900 of bytes, 200 failures, 2.0% sends CPU-late"), svg);
        assertTrue(svg.contains("(!) Homa: INVALID"), svg);
        assertFalse(svg.contains("(!) TCP"), svg);
    }

    @Test
    @SuppressWarnings("unchecked")
    void severalRuns_giveTheRangeOfEachFigure() throws Exception {
        Path run1 = root.resolve("run1");
        Path run2 = root.resolve("run2");
        Path run3 = root.resolve("run3");
        loadRun(run1.resolve("load-80"), 0.8, 1000, 0, 1000);
        loadRun(run2.resolve("load-80"), 0.8, 900, 20, 2000);
        loadRun(run3.resolve("load-80"), 0.8, 1000, 0, 1500);
        loadRun(run1.resolve("load-50"), 0.5, 1000, 0, 1000);
        Path out = root.resolve("ranges");
        assertEquals(0, LoadReportCommand.execute(new String[] {"--runs", run1 + "," + run2 + "," + run3, "--out", out.toString()}));

        Map<String, Object> j = json(out.resolve("runs.json"));
        assertEquals(3, ((Number) j.get("runCount")).intValue());
        List<Object> loads = (List<Object>) j.get("loads");
        assertEquals(2, loads.size());
        Map<String, Object> l50 = (Map<String, Object>) loads.get(0);
        assertEquals(0.5, num(l50.get("load")));
        assertEquals(1, ((Number) l50.get("runs")).intValue(), "only run 1 has 50%");
        Map<String, Object> l80 = (Map<String, Object>) loads.get(1);
        assertEquals(2, ((Number) l80.get("validRuns")).intValue());
        Map<String, Object> homa = (Map<String, Object>) ((Map<String, Object>) l80.get("protocols")).get("homa");
        Map<String, Object> p99 = (Map<String, Object>) homa.get("shortP99Slowdown");
        assertEquals(1000.0 / 108, num(p99.get("min")), 0.01 * 1000 / 108);
        assertEquals(2000.0 / 108, num(p99.get("max")), 0.01 * 2000 / 108);
        Map<String, Object> bytes = (Map<String, Object>) homa.get("completedBytesOverOffered");
        assertEquals(0.9, num(bytes.get("min")), 1e-9);
        assertEquals(1.0, num(bytes.get("max")), 1e-9);
        assertEquals(2, ((Number) homa.get("carriedRuns")).intValue());
        Map<String, Object> ratio = (Map<String, Object>) l80.get("tcpOverHomaShortP99");
        assertEquals(5000.0 / 2000, num(ratio.get("min")), 0.02 * 2.5);
        assertEquals(5000.0 / 1000, num(ratio.get("max")), 0.02 * 5);

        String md = Files.readString(out.resolve("runs.md"));
        assertTrue(md.contains("| 80% | homa | 2 of 3 | 2 of 3 | 200 | 9.26 to 18.5 |"), md);
        assertTrue(md.contains("0.900 to 1.000"), md);
        assertTrue(md.contains("0.00% to 2.00%"), md);
    }
}
