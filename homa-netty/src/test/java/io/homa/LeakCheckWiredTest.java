package io.homa;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMethod;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The leak check runs after every test of this module. JUnit's auto-detection cannot register it
 * here (see {@link LeakCheck}): each test class names it, and this test fails for a class that
 * does not, and if the check did not run for this very class.
 */
@ExtendWith(LeakCheck.class)
class LeakCheckWiredTest {
    private static final List<String> TEST_ANNOTATIONS = List.of("org.junit.jupiter.api.Test",
            "org.junit.jupiter.params.ParameterizedTest", "org.junit.jupiter.api.RepeatedTest",
            "org.junit.jupiter.api.TestFactory");

    @Test
    void theCheckRanForThisClass() {
        assertTrue(LeakCheck.CHECKED.contains(LeakCheckWiredTest.class), "LeakCheck's beforeAll never ran here");
    }

    @Test
    void everyTestClassNamesTheLeakCheck() {
        JavaClasses tests = new ClassFileImporter().withImportOption(ImportOption.Predefined.ONLY_INCLUDE_TESTS)
                .importPackages("io.homa");
        assertTrue(tests.contain(LeakCheckWiredTest.class), "this module's test classes were not found");
        List<String> missing = new ArrayList<>();
        for (JavaClass c : tests) {
            if (hasTests(c) && !checked(c)) {
                missing.add(c.getName());
            }
        }
        assertTrue(missing.isEmpty(), "test classes without @ExtendWith(LeakCheck.class): " + missing);
    }

    private static boolean hasTests(JavaClass c) {
        for (JavaMethod m : c.getMethods()) {
            if (TEST_ANNOTATIONS.stream().anyMatch(m::isAnnotatedWith)) {
                return true;
            }
        }
        return false;
    }

    /** Named on the class or on a class it is nested in (JUnit's @Nested classes inherit it). */
    private static boolean checked(JavaClass c) {
        for (JavaClass k = c; k != null; k = k.getEnclosingClass().orElse(null)) {
            if (k.isAnnotatedWith(ExtendWith.class)
                    && Arrays.asList(k.getAnnotationOfType(ExtendWith.class).value()).contains(LeakCheck.class)) {
                return true;
            }
        }
        return false;
    }
}
