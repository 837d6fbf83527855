package io.homa.grpc;

import io.homa.grpc.examples.HelloGrpc;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The README's gRPC quick start is this module's {@code examples/HelloGrpc.java}, and it works. */
class QuickStartTest {
    private static final Path README = Path.of("..", "README.md");
    private static final Path EXAMPLE = Path.of("src", "test", "java", "io", "homa", "grpc", "examples", "HelloGrpc.java");

    @Test
    void theReadmeShowsExactlyTheTestedExample() throws Exception {
        String readme = Files.readString(README);
        int section = readme.indexOf("## gRPC");
        assertTrue(section >= 0, "README has a gRPC section");
        int start = readme.indexOf("```java\n", section) + "```java\n".length();
        int end = readme.indexOf("```", start);
        String shown = readme.substring(start, end).strip();
        List<String> lines = Files.readAllLines(EXAMPLE);
        String tested = lines.stream().skip(2).collect(Collectors.joining("\n")).strip(); // without "package …;"
        assertEquals(tested, shown, "the README's gRPC quick start must be examples/HelloGrpc.java without its package line");
        long code = shown.lines().filter(l -> !l.isBlank() && !l.startsWith("import ")).count();
        assertTrue(code <= 15, "15 lines of code at most (imports aside), was " + code);
    }

    @Test
    void theExampleSaysHello() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream original = System.out;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            assertTimeoutPreemptively(Duration.ofSeconds(60), () -> HelloGrpc.main(new String[0]));
        } finally {
            System.setOut(original);
        }
        assertEquals("hello, Homa", out.toString(StandardCharsets.UTF_8).strip());
    }
}
