package io.homa.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.homa.bench.TcpTransportTest.await;
import static io.homa.bench.TcpTransportTest.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code compare --processes 2}: the servers run in a JVM of their own, whose cost is counted too. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SeparateProcessTest {
    @Test
    void aServerInAnotherJvm_echoes_andReportsWhatItSpent() throws Exception {
        try (SeparateProcessTransport t = new SeparateProcessTransport(Transports.create(Transports.TCP_POOL))) {
            for (int round = 0; round < 2; round++) { // the same JVM serves one server after another
                try (EchoPair pair = EchoPair.open(t)) {
                    EchoServer.Cost cost = pair.server().startCost();
                    assertNotNull(cost, "a server in another process reports its own cost");
                    for (int size : new int[] {0, 100, 100_000, 1_000_000}) {
                        byte[] request = random(size, size + round);
                        assertArrayEquals(request, await(pair.client().call(request)), "size " + size);
                    }
                    CostMeter.Cost spent = cost.stop();
                    assertTrue(spent.wallNanos() > 0, spent.toString());
                    assertTrue(spent.cpuNanos() >= 0, spent.toString()); // may tick in 10 ms steps
                    assertTrue(spent.allocatedBytes() == -1 || spent.allocatedBytes() > 0, spent.toString());
                }
            }
        }
    }

    @Test
    void linesThatAreNoAnswer_fromAnAgentInTheServerJvm_areSetAside() {
        for (String answer : List.of("READY 127.0.0.1 4000", "OK", "COST 1 2 3 4", "STOPPED", "ERROR unknown command: X")) {
            assertTrue(ServerProcess.isAnswer(answer), answer);
        }
        for (String noise : List.of("Profiling started", "Picked up JAVA_TOOL_OPTIONS: -Dx=y", "", "OKAY")) {
            assertEquals(false, ServerProcess.isAnswer(noise), noise);
        }
    }

    @Test
    void aServerInThisJvm_reportsNoCostOfItsOwn() {
        try (EchoPair pair = EchoPair.open(Transports.TCP_POOL)) {
            assertEquals(null, pair.server().startCost());
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void compare_withTwoProcesses_recordsThemInResultsJson(@TempDir Path dir) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            code = CompareCommand.execute(new String[] {"--smoke", "--processes", "2", "--transports", "homa,tcp-blocking",
                    "--scenarios", "unloaded-100B,throughput-1MB", "--out", dir.toString()}, o, e);
        }
        String log = err.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, () -> "stdout:\n" + out + "\nstderr:\n" + log);
        Map<String, Object> root = (Map<String, Object>) JsonParser.parse(Files.readString(dir.resolve("results.json")));
        Map<String, Object> machine = (Map<String, Object>) root.get("machine");
        assertEquals(2.0, ((Number) machine.get("processes")).doubleValue());
        assertEquals("loopback", machine.get("path"));
        Map<String, Object> results = (Map<String, Object>) root.get("results");
        for (String t : List.of("homa", "tcp-blocking")) {
            Map<String, Object> fig = (Map<String, Object>) ((Map<String, Object>) results.get(t)).get("unloaded-100B");
            assertTrue(((Number) fig.get("p50_us")).doubleValue() > 0, t);
            assertTrue(((Number) fig.get("alloc_bytes_per_call")).doubleValue() > 0, t + ": both processes' allocation");
        }
    }
}
