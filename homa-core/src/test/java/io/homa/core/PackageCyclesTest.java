package io.homa.core;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.Slice;
import com.tngtech.archunit.library.dependencies.Slices;
import org.junit.jupiter.api.Test;

import java.util.Set;
import java.util.TreeSet;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packages of homa-core ({@code io.homa.core}, {@code io.homa.core.wire},
 * {@code io.homa.core.sim}) depend on each other without cycles: the wire format knows nothing of
 * the engine, and the engine nothing of the simulated network.
 */
class PackageCyclesTest {
    /**
     * One slice per package. Not {@code "io.homa.core.(**)"}: that pattern needs a dot after
     * {@code core}, so the root package would be no slice and a cycle through it would go unseen.
     */
    private static final String ONE_SLICE_PER_PACKAGE = "io.homa.(**)";

    private static final JavaClasses MAIN_CLASSES = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.homa.core");

    @Test
    void packages__freeOfCycles() {
        slices().matching(ONE_SLICE_PER_PACKAGE).should().beFreeOfCycles().check(MAIN_CLASSES);
    }

    /** Guards the rule above: a class that falls into no slice would escape it. */
    @Test
    void slices__everyClassInOne_rootPackageIncluded() {
        Set<String> names = new TreeSet<>();
        int classes = 0;
        for (Slice s : Slices.matching(ONE_SLICE_PER_PACKAGE).transform(MAIN_CLASSES)) {
            names.add(s.getNamePart(1));
            classes += s.size();
        }
        assertTrue(names.containsAll(Set.of("core", "core.wire", "core.sim")), names.toString());
        assertEquals(MAIN_CLASSES.size(), classes, "every class is in a slice");
    }
}
