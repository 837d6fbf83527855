package io.homa.bench.load;

import io.homa.bench.JsonParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The sweep's "highest load sustained": calls and bytes must both keep up. */
class LoadReportSweepTest {
    @TempDir
    Path root;

    private static void report(Path dir, double load, double homaCalls, double homaBytes) throws Exception {
        Files.createDirectories(dir);
        String row = "{\"summary\": {\"offeredCalls\": 1000, \"offeredGbps\": 0.1, \"completedGbps\": %s,"
                + " \"completedOverOffered\": %s, \"completedBytesOverOffered\": %s, \"failures\": 0, \"shortP99Slowdown\": 5}}";
        String json = String.format(Locale.ROOT, "{\"load\": %s, \"protocols\": {\"homa\": " + row + ", \"tcp\": " + row + "}}",
                load, 0.1 * homaBytes, homaCalls, homaBytes, 0.1, 1.0, 1.0);
        Files.writeString(dir.resolve("report.json"), json, StandardCharsets.UTF_8);
    }

    @Test
    void aRunTheReportJudgedInvalid_isInvalidInTheSweep_evenWhenItsRoundedFractionIsAtTheLimit() throws Exception {
        Path dir = root.resolve("load-50");
        Files.createDirectories(dir);
        // 1.05% of sends CPU-late, written with three decimals as 0.01: the report said invalid.
        String homa = "{\"summary\": {\"offeredCalls\": 1000, \"offeredGbps\": 0.1, \"completedGbps\": 0.1,"
                + " \"completedOverOffered\": 1, \"completedBytesOverOffered\": 1, \"failures\": 0, \"shortP99Slowdown\": 5,"
                + " \"cpuLateFraction\": 0.01, \"validCpu\": false}}";
        Files.writeString(dir.resolve("report.json"), "{\"load\": 0.5, \"protocols\": {\"homa\": " + homa + "}}",
                StandardCharsets.UTF_8);
        assertEquals(0, LoadReportCommand.execute(new String[] {"--sweep", dir.toString(), "--out", root.toString()}));
        String md = Files.readString(root.resolve("sweep.md"));
        assertTrue(md.contains("INVALID: measures the CPU"), md);
    }

    @Test
    @SuppressWarnings("unchecked")
    void bytesFallingBehind_isNotSustained() throws Exception {
        report(root.resolve("load-50"), 0.5, 1.0, 0.99);
        report(root.resolve("load-80"), 0.8, 0.99, 0.60); // the calls keep up, the bytes do not
        int code = LoadReportCommand.execute(new String[] {"--sweep", root.resolve("load-50").toString(),
                root.resolve("load-80").toString(), "--out", root.toString()});
        assertEquals(0, code);
        Map<String, Object> sweep = (Map<String, Object>) JsonParser.parse(Files.readString(root.resolve("sweep.json")));
        Map<String, Object> highest = (Map<String, Object>) sweep.get("highestSustainedLoad");
        assertEquals(0.5, ((Number) highest.get("homa")).doubleValue());
        assertEquals(0.8, ((Number) highest.get("tcp")).doubleValue());
        assertTrue(Files.readString(root.resolve("sweep.md")).contains("| 80% | homa | 0.10 | 0.06 | 0.990 | 0.600 |"),
                Files.readString(root.resolve("sweep.md")));
    }
}
