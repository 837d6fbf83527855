package io.homa.bench;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Runs {@code tshark -T fields} with the Homa dissector over a capture and returns one row per
 * frame. tshark refuses Lua scripts when run as root, so as root it runs as {@code nobody}
 * (through runuser); the script and the capture must then be readable by that user.
 */
final class Tshark {
    /** Separates the values of one field that occurs several times in a frame (a GSO batch). */
    private static final String AGGREGATOR = "|";

    private Tshark() {
    }

    /** One frame: the values of each requested field, in order of occurrence. */
    record Row(Map<String, List<String>> fields) {
        List<String> all(String field) {
            return fields.get(field);
        }

        String one(String field) {
            List<String> v = fields.get(field);
            assertEquals(1, v.size(), field + " in " + fields);
            return v.get(0);
        }
    }

    /** An executable on the PATH or in the system directories, if installed. */
    static Optional<Path> executable(String name) {
        List<String> dirs = new ArrayList<>(Arrays.asList(System.getenv().getOrDefault("PATH", "").split(":")));
        dirs.addAll(List.of("/usr/sbin", "/usr/bin", "/sbin", "/bin"));
        return dirs.stream().filter(d -> !d.isEmpty()).map(d -> Path.of(d, name))
                .filter(Files::isExecutable).findFirst();
    }

    /** The command prefix that runs tshark as an unprivileged user. */
    static List<String> unprivileged(Path tshark) {
        if (!"root".equals(System.getProperty("user.name"))) {
            return List.of(tshark.toString());
        }
        Optional<Path> runuser = executable("runuser");
        Assumptions.assumeTrue(runuser.isPresent(),
                "tshark refuses Lua scripts as root and runuser (util-linux) is missing to run it as nobody");
        return List.of(runuser.get().toString(), "-u", "nobody", "--", tshark.toString());
    }

    /**
     * Decodes {@code pcap} with the dissector {@code script}, the given preferences
     * ({@code name:value}) and fields, and checks that tshark reported no error (a Lua error is
     * only a message, tshark still exits 0).
     */
    static List<Row> fields(Path tshark, Path script, Path pcap, List<String> prefs, List<String> fields)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(unprivileged(tshark));
        cmd.addAll(List.of("-n", "-r", pcap.toString(), "-X", "lua_script:" + script,
                "-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=" + AGGREGATOR));
        for (String pref : prefs) {
            cmd.addAll(List.of("-o", pref));
        }
        for (String field : fields) {
            cmd.addAll(List.of("-e", field));
        }
        Path err = pcap.resolveSibling("tshark.err");
        Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "tshark did not finish");
        String errors = Files.readString(err);
        assertEquals(0, p.exitValue(), "tshark failed: " + errors);
        assertFalse(errors.contains("Lua") || errors.contains("lua"), "the dissector failed to load or run: " + errors);
        List<Row> rows = new ArrayList<>();
        for (String line : out.split("\n")) {
            if (line.isEmpty()) {
                continue;
            }
            String[] cells = line.split("\t", -1);
            assertEquals(fields.size(), cells.length, "fields of: " + line);
            Map<String, List<String>> m = new LinkedHashMap<>();
            for (int i = 0; i < cells.length; i++) {
                m.put(fields.get(i), cells[i].isEmpty() ? List.of()
                        : List.of(cells[i].split(java.util.regex.Pattern.quote(AGGREGATOR), -1)));
            }
            rows.add(new Row(m));
        }
        return rows;
    }
}
