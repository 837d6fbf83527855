package io.homa;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** System commands for the tests that build network namespaces, and the class path of a child JVM. */
final class SystemCommands {
    private SystemCommands() {
    }

    /** Runs {@code cmd}, output discarded; its exit code, or -1 if it took over 30 s (killed). */
    static int exec(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return -1;
        }
        return p.exitValue();
    }

    /** Runs {@code cmd} and returns what it printed (standard output and error). */
    static String run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(30, TimeUnit.SECONDS);
        return out;
    }

    /** Whether {@code command} is on the PATH. */
    static boolean onPath(String command) throws IOException, InterruptedException {
        return exec("sh", "-c", "command -v " + command) == 0;
    }

    /** The test's own class path (and module path, flattened), for a child JVM. */
    static String testClassPath() {
        List<String> path = new ArrayList<>();
        String base = System.getProperty("basedir", System.getProperty("user.dir"));
        path.add(Path.of(base, "target", "test-classes").toString());
        path.add(Path.of(base, "target", "classes").toString());
        for (String p : new String[]{System.getProperty("jdk.module.path"), System.getProperty("java.class.path")}) {
            if (p != null && !p.isEmpty()) {
                path.add(p);
            }
        }
        return String.join(File.pathSeparator, path);
    }

    /** The java command of this JVM. */
    static String java() {
        return ProcessHandle.current().info().command().orElse("java");
    }
}
