package io.homa;

import io.homa.examples.Echo;
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

/** The README's quick start is this module's {@code examples/Echo.java}, and it works. */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class QuickStartTest {
    private static final Path README = Path.of("..", "README.md");
    private static final Path ECHO = Path.of("src", "test", "java", "io", "homa", "examples", "Echo.java");

    @Test
    void theReadmeShowsExactlyTheTestedExample() throws Exception {
        String readme = Files.readString(README);
        int section = readme.indexOf("## Quick start");
        assertTrue(section >= 0, "README has a Quick start section");
        int start = readme.indexOf("```java\n", section) + "```java\n".length();
        int end = readme.indexOf("```", start);
        String shown = readme.substring(start, end).strip();
        List<String> lines = Files.readAllLines(ECHO);
        String tested = lines.stream().skip(2).collect(Collectors.joining("\n")).strip(); // without "package …;"
        assertEquals(tested, shown, "the README's quick start must be examples/Echo.java without its package line");
        assertTrue(shown.lines().count() < 20, "under 20 lines, was " + shown.lines().count());
    }

    @Test
    void theExampleEchoes() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream original = System.out;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            assertTimeoutPreemptively(Duration.ofSeconds(30), () -> Echo.main(new String[0]));
        } finally {
            System.setOut(original);
        }
        assertEquals("hello, Homa", out.toString(StandardCharsets.UTF_8).strip());
    }
}
