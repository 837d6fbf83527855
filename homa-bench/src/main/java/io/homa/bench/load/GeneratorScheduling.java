package io.homa.bench.load;

import io.homa.bench.SystemCommand;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Puts the load generator's thread in the kernel's real-time class ({@code SCHED_FIFO}), so that
 * it runs the moment its send time comes instead of waiting on a run queue behind the event
 * loops of four JVMs and the kernel's network stack (on this machine's two cores at 80% load,
 * 46% of the CPU went to softirqs and the generator waited on a run queue for 1.4-1.7 s of a 40 s
 * run: see docs/benchmarks.md, "Why the generator was late"). The generator is the measuring
 * instrument: it only decides when each call starts and hands it to the transport's own threads
 * (for both protocols), which keep their normal priority, so the protocols' costs stay in their
 * latencies. Needs root (CAP_SYS_NICE) and util-linux's {@code chrt}; without them the thread
 * keeps its normal class and {@link #apply} says why.
 */
final class GeneratorScheduling {
    /** Above the kernel's threaded-IRQ default (50) would be unkind; 10 preempts every normal thread. */
    static final int FIFO_PRIORITY = 10;

    private GeneratorScheduling() {
    }

    /**
     * Moves the calling thread to {@code SCHED_FIFO} at {@link #FIFO_PRIORITY} when {@code fifo};
     * returns its class, {@code "SCHED_FIFO 10"} or, e.g., {@code "normal (chrt failed: ...)"}.
     */
    static String apply(boolean fifo) {
        if (!fifo) {
            return "normal (asked)";
        }
        String tid = tid();
        return tid == null ? "normal (no /proc/thread-self: not Linux)"
                : run("SCHED_FIFO " + FIFO_PRIORITY, "chrt", "--fifo", "--pid", String.valueOf(FIFO_PRIORITY), tid);
    }

    /** The calling thread's kernel thread id, null where there is no /proc/thread-self. */
    private static String tid() {
        try {
            // "/proc/thread-self" links to "PID/task/TID" for the thread that reads it.
            return Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString();
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return null;
        }
    }

    /** Runs a util-linux command; returns {@code done} or "normal (why it failed)". */
    private static String run(String done, String... command) {
        String tool = command[0];
        try {
            SystemCommand r = SystemCommand.run(command);
            return r.ok() ? done : "normal (" + tool + " failed: " + (r.output().isEmpty() ? "exit " + r.exit() : r.output()) + ")";
        } catch (IOException e) {
            return "normal (no " + tool + ": " + e.getMessage() + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "normal (interrupted)";
        }
    }
}
