package io.homa.bench;

import org.junit.jupiter.api.Assumptions;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A tcpdump capture of loopback traffic into a pcap file, for the duration of a test. tcpdump
 * writes packet by packet ({@code -U}), so the test can wait until a datagram it sent last is in
 * the file before stopping the capture.
 */
final class PacketCapture implements AutoCloseable {
    private static final Pattern KERNEL_DROPS = Pattern.compile("(\\d+) packets? dropped by kernel");

    private final Process process;
    private final Path file;
    private final List<String> messages = new CopyOnWriteArrayList<>();
    private final CountDownLatch listening = new CountDownLatch(1);
    private final Thread reader;

    private PacketCapture(Process process, Path file) {
        this.process = process;
        this.file = file;
        reader = new Thread(this::readMessages, "tcpdump-stderr");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts {@code tcpdump -i lo} with a capture filter and returns once it captures. Skips the
     * test (an assumption) when this process may not capture.
     */
    static PacketCapture start(Path tcpdump, Path file, String filter) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(tcpdump.toString(), "-i", "lo", "-n", "-U", "-B", "8192",
                "-w", file.toString(), filter).start();
        p.getOutputStream().close();
        PacketCapture capture = new PacketCapture(p, file);
        try {
            capture.awaitListening();
        } catch (InterruptedException | RuntimeException | Error e) {
            capture.close();
            throw e;
        }
        return capture;
    }

    /** tcpdump says "listening on lo" once the capture runs, or exits with its reason. */
    private void awaitListening() throws InterruptedException {
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!listening.await(10, TimeUnit.MILLISECONDS)) {
            if (System.nanoTime() - giveUp > 0) {
                fail("tcpdump did not start capturing within 30 s: " + messages);
            }
            if (!process.isAlive()) {
                String why = String.join("\n", messages);
                Assumptions.assumeFalse(why.contains("ermission") || why.contains("not permitted"),
                        "tcpdump may not capture on lo here: " + why);
                fail("tcpdump exited (" + process.exitValue() + ") before capturing: " + why);
            }
        }
    }

    private void readMessages() {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
                messages.add(line);
                if (line.contains("listening on")) {
                    listening.countDown();
                }
            }
        } catch (IOException e) {
            messages.add("(reading tcpdump's messages failed: " + e + ")");
        }
    }

    /** Waits until the capture file holds {@code bytes} (the payload of a datagram sent last). */
    void awaitCaptured(byte[] bytes, Duration timeout) throws IOException {
        long giveUp = System.nanoTime() + timeout.toNanos();
        while (indexOf(Files.readAllBytes(file), bytes) < 0) {
            if (System.nanoTime() - giveUp > 0 || !process.isAlive()) {
                fail("the capture did not receive the last datagram within " + timeout + "; tcpdump: " + messages);
            }
            LockSupport.parkNanos(5_000_000);
        }
    }

    /** Stops tcpdump (SIGTERM: it flushes the file and reports) and checks it lost no packet. */
    void stop() throws InterruptedException {
        process.toHandle().destroy(); // not Process.destroy(), which also closes the pipe of its report
        assertTrue(process.waitFor(20, TimeUnit.SECONDS), "tcpdump did not stop");
        reader.join(TimeUnit.SECONDS.toMillis(10)); // its statistics are the last lines it writes
        long dropped = -1;
        for (String m : messages) {
            Matcher matcher = KERNEL_DROPS.matcher(m);
            if (matcher.find()) {
                dropped = Long.parseLong(matcher.group(1));
            }
        }
        assertTrue(dropped == 0, "tcpdump must capture every packet; it reported: " + messages);
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
