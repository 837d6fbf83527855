package io.homa.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A short system command the benchmarks run ({@code ip}, {@code chrt}, {@code id}): its exit code
 * and its output (standard error merged in). It is given {@link #TIMEOUT_SECONDS} and then killed,
 * and the output is read only after it has ended, so a command that hangs cannot hang the caller
 * (these commands print a line or two, well within a pipe's buffer).
 *
 * @param exit   the exit code; -1 when the command did not end in time (it was killed)
 * @param output what it printed, trimmed
 */
public record SystemCommand(int exit, String output) {
    /** How long a command may take. */
    public static final long TIMEOUT_SECONDS = 10;

    /** Whether it ended with exit code 0. */
    public boolean ok() {
        return exit == 0;
    }

    /**
     * Runs {@code command} and waits for it.
     *
     * @throws IOException when it cannot be started (not installed, not permitted)
     * @throws InterruptedException when the calling thread is interrupted while waiting
     */
    public static SystemCommand run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return new SystemCommand(-1, "did not end in " + TIMEOUT_SECONDS + " s");
        }
        return new SystemCommand(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim());
    }

    /** {@link #run(List)} with the command's words as arguments. */
    public static SystemCommand run(String... command) throws IOException, InterruptedException {
        return run(List.of(command));
    }
}
