package io.homa;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The BOM has no parent (users import it: it must list only our modules), so its version and its
 * list are kept by hand: this holds them to the parent's version and module list.
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class BomTest {
    private static final Pattern VERSION = Pattern.compile("<artifactId>([^<]+)</artifactId>\\s*<version>([^<]+)</version>");

    @Test
    void theBom_hasTheParentsVersion_andListsEveryModule() throws Exception {
        String parent = Files.readString(Path.of("..", "pom.xml"));
        String bom = Files.readString(Path.of("..", "homa-bom", "pom.xml"));
        Matcher p = VERSION.matcher(parent);
        assertTrue(p.find() && p.group(1).equals("homa-parent"), "the parent's own coordinates come first");
        Matcher b = VERSION.matcher(bom);
        assertTrue(b.find() && b.group(1).equals("homa-bom"), "the BOM's own coordinates come first");
        assertEquals(p.group(2), b.group(2), "homa-bom's version");
        List<String> modules = new ArrayList<>();
        Matcher m = Pattern.compile("<module>([^<]+)</module>").matcher(parent);
        while (m.find()) {
            if (!m.group(1).equals("homa-bom")) {
                modules.add(m.group(1));
            }
        }
        assertTrue(modules.size() >= 5, modules.toString());
        for (String module : modules) {
            assertTrue(bom.contains("<artifactId>" + module + "</artifactId>"), "the BOM lists " + module);
        }
    }
}
