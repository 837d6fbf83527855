package io.homa.bench.sim;

import io.homa.bench.JsonParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.xml.parsers.DocumentBuilderFactory;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The simulate command end to end, on a tiny datacenter and a short virtual time. */
class SimulateCommandTest {
    private record Outcome(int code, String out, String err) { }

    private static final String[] TINY = {"--hosts", "8", "--racks", "2", "--warmup-ms", "0.5", "--window-ms", "2", "--drain-ms", "1"};

    private static Outcome simulate(Path dir, String... args) {
        String[] all = new String[args.length + TINY.length + 2];
        System.arraycopy(args, 0, all, 0, args.length);
        System.arraycopy(TINY, 0, all, args.length, TINY.length);
        all[all.length - 2] = "--out";
        all[all.length - 1] = dir.toString();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            code = SimulateCommand.execute(all, o, e);
        }
        return new Outcome(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> json(Path file) throws Exception {
        return (Map<String, Object>) JsonParser.parse(Files.readString(file));
    }

    @SuppressWarnings("unchecked")
    private static void assertRun(Map<String, Object> r) {
        for (String key : List.of("workload", "load", "hosts", "short_p99_slowdown", "completed_bytes_fraction", "buckets")) {
            assertTrue(r.containsKey(key), "missing " + key + " in " + r.keySet());
        }
        double shortP99 = ((Number) r.get("short_p99_slowdown")).doubleValue();
        assertTrue(shortP99 >= 1.0 && shortP99 < 10_000, "short p99 slowdown " + shortP99); // FIFO reaches 100s
        List<Map<String, Object>> buckets = (List<Map<String, Object>>) r.get("buckets");
        assertEquals(10, buckets.size());
        long count = 0;
        for (Map<String, Object> b : buckets) {
            for (String key : List.of("max_bytes", "p50_slowdown", "p99_slowdown", "count")) {
                assertTrue(b.containsKey(key), "bucket without " + key + ": " + b);
            }
            count += ((Number) b.get("count")).longValue();
        }
        assertTrue(count > 100, "messages measured: " + count);
    }

    @Test
    @SuppressWarnings("unchecked")
    void oneRunWritesResultsJsonWithEveryField(@TempDir Path dir) throws Exception {
        Outcome o = simulate(dir, "--workload", "w3", "--load", "0.6");
        assertEquals(0, o.code, o.err);
        Map<String, Object> r = json(dir.resolve("results.json"));
        assertRun(r);
        assertEquals("w3", r.get("workload"));
        assertEquals(8L, ((Number) r.get("hosts")).longValue());
        assertTrue(o.out.contains("short-message p99 slowdown"), o.out);
        assertTrue(o.err.contains("M events/s"), o.err);
        Map<String, Object> sim = (Map<String, Object>) r.get("simulation");
        List<Map<String, Object>> backlog = (List<Map<String, Object>>) sim.get("backlog");
        assertTrue(backlog.size() >= SimRun.SAMPLES - 1, "about " + SimRun.SAMPLES + " backlog samples: " + backlog.size());
        Map<String, Object> counters = (Map<String, Object>) sim.get("engine_counters");
        assertTrue(((Number) counters.get("packets_sent_data")).longValue() > 0, counters.toString());
        double half = ((Number) r.get("completed_bytes_fraction_second_half")).doubleValue();
        assertTrue(half > 0 && half < 2, "second half " + half);
    }

    @Test
    @SuppressWarnings("unchecked")
    void ablationsRunEveryMechanismAndDrawThem(@TempDir Path dir) throws Exception {
        Outcome o = simulate(dir, "--workload", "w3", "--load", "0.6", "--ablations");
        assertEquals(0, o.code, o.err);
        List<Map<String, Object>> runs = (List<Map<String, Object>>) json(dir.resolve("ablations.json")).get("runs");
        assertEquals(List.of("homa", "one-priority", "fifo", "no-overcommit"), runs.stream().map(r -> r.get("ablation")).toList());
        runs.forEach(SimulateCommandTest::assertRun);
        DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(dir.resolve("ablations.svg").toFile());
    }

    @Test
    @SuppressWarnings("unchecked")
    void sweepAndFigureWriteTheirFiles(@TempDir Path dir) throws Exception {
        Outcome sweep = simulate(dir, "--workload", "w3", "--sweep", "--loads", "0.5,0.9");
        assertEquals(0, sweep.code, sweep.err);
        List<Map<String, Object>> runs = (List<Map<String, Object>>) json(dir.resolve("sweep.json")).get("runs");
        assertEquals(2, runs.size());
        runs.forEach(SimulateCommandTest::assertRun);
        assertTrue(sweep.out.contains("carried") && sweep.out.contains("second half"), sweep.out);

        Outcome figure = simulate(dir, "--figure", "--load", "0.5");
        assertEquals(0, figure.code, figure.err);
        Map<String, Object> f = json(dir.resolve("figure.json"));
        assertEquals(5, ((List<Object>) f.get("runs")).size());
        assertTrue(((List<Object>) f.get("paper")).size() >= 5, "the paper's points are in the JSON");
        String svg = Files.readString(dir.resolve("figure.svg"));
        DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(dir.resolve("figure.svg").toFile());
        assertTrue(svg.contains("paper: homa") && svg.contains("W5"), "paper curve and five panels");
    }

    @Test
    void tunerPrintsTheBestAsHomaConfig(@TempDir Path dir) throws Exception {
        Outcome o = simulate(dir, "--workload", "w2", "--load", "0.5", "--tune");
        assertEquals(0, o.code, o.err);
        assertTrue(o.out.contains("HomaConfig.builder()") && o.out.contains(".unscheduledBytes("), o.out);
        assertTrue(o.out.contains(".grantBatchSegments(") && o.out.contains(".maxScheduledPriority("), o.out);
        Map<String, Object> tune = json(dir.resolve("tune.json"));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> ranked = (List<Map<String, Object>>) tune.get("ranked");
        // Coordinate descent from the defaults: 4 unscheduled + 2 more overcommitments + 3 more
        // batchings + 2 more cutoff choices, each setting run once.
        assertEquals(11, ranked.size());
        assertEquals(11, ranked.stream().map(r -> r.get("setting")).distinct().count(), "no setting twice");
        ranked.forEach(SimulateCommandTest::assertRun);
    }

    @Test
    void badArgumentsExitTwo(@TempDir Path dir) {
        assertEquals(2, simulate(dir, "--workload", "w9").code);
        assertEquals(2, simulate(dir, "--load", "3").code);
        assertEquals(2, simulate(dir, "--ablation", "none-such").code);
    }
}
