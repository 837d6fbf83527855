package io.homa.bench;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A JVM of its own that runs one transport's echo servers ({@link ServerProcessCommand}), started
 * by {@code compare --processes 2} with the same Java and class path as this one. Commands and
 * answers are lines over its standard input and output; its standard error goes to ours. Not
 * thread-safe: the comparison drives it from one thread.
 */
final class ServerProcess implements AutoCloseable {
    /** How long an answer may take (a server's start included). */
    private static final long ANSWER_SECONDS = 30;

    private final Process process;
    private final BufferedWriter commands;
    /** The JVM's answers, read by a thread of their own so that a silent JVM cannot hang us. */
    private final BlockingQueue<String> answers = new LinkedBlockingQueue<>();

    /**
     * @param prefix  runs the JVM through this command (e.g. {@code ip netns exec NS}), or empty
     * @param jvmArgs options for the JVM (e.g. its {@link NettyIo#HOST_PROPERTY})
     */
    ServerProcess(String transport, List<String> prefix, List<String> jvmArgs) {
        List<String> cmd = Main.javaCommand(prefix, jvmArgs, List.of("echo-server", "--transport", transport));
        try {
            process = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the server JVM: " + cmd, e);
        }
        commands = new BufferedWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8));
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        Thread reader = new Thread(() -> {
            try {
                for (String line; (line = out.readLine()) != null; ) {
                    if (isAnswer(line)) {
                        answers.add(line);
                    } else { // e.g. "Profiling started" from an agent in JAVA_TOOL_OPTIONS: not ours
                        System.err.println("server JVM: " + line);
                    }
                }
            } catch (IOException e) {
                // the JVM is gone: ask() notices
            }
        }, "server-jvm-" + transport);
        reader.setDaemon(true);
        reader.start();
    }

    /** Whether a line of the server JVM's output is an answer of its protocol ({@link ServerProcessCommand}). */
    static boolean isAnswer(String line) {
        return line.startsWith("READY ") || line.equals("OK") || line.startsWith("COST ") || line.equals("STOPPED")
                || line.startsWith("ERROR ");
    }

    /** Sends {@code command} and returns the answer, which must start with {@code expected}. */
    String ask(String command, String expected) {
        try {
            commands.write(command);
            commands.newLine();
            commands.flush();
            String answer = answers.poll(ANSWER_SECONDS, TimeUnit.SECONDS);
            if (answer == null) {
                throw new IllegalStateException(process.isAlive()
                        ? "the server JVM did not answer " + command + " within " + ANSWER_SECONDS + " s"
                        : "the server JVM exited (" + process.exitValue() + ") on " + command);
            }
            if (!answer.startsWith(expected)) {
                throw new IllegalStateException("the server JVM answered " + command + " with: " + answer);
            }
            return answer;
        } catch (IOException e) {
            throw new UncheckedIOException("the server JVM's pipe broke on " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for the server JVM", e);
        }
    }

    /** What the server JVM spent between its BEGIN and this END. */
    CostMeter.Cost endCost() {
        String[] f = ask("END", "COST ").split(" ");
        return new CostMeter.Cost(Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]));
    }

    /** Asks the JVM to quit, and kills it if it does not within 10 s. */
    @Override
    public void close() {
        try {
            commands.write("QUIT");
            commands.newLine();
            commands.flush();
        } catch (IOException e) {
            // gone already
        }
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
