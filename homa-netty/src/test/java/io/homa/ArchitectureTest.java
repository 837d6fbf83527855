package io.homa;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The layering of homa-netty and homa-core, from their class files: no package of either is in a
 * cycle with another, the shell ({@code io.homa.internal..}) never reaches up into the API
 * package, and the engine never reaches into the shell or the API.
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class ArchitectureTest {
    private static JavaClasses classes;

    @BeforeAll
    static void importClasses() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.homa");
        assertTrue(classes.contain(HomaSocket.class) && classes.contain(io.homa.core.HomaEngine.class)
                && classes.contain(io.homa.internal.loop.EngineLoops.class), "the shell's and the engine's classes");
    }

    /** Each package is a slice of its own, the API package io.homa included. */
    private static final SliceAssignment BY_PACKAGE = new SliceAssignment() {
        @Override
        public SliceIdentifier getIdentifierOf(JavaClass c) {
            return c.getPackageName().startsWith("io.homa") ? SliceIdentifier.of(c.getPackageName())
                    : SliceIdentifier.ignore();
        }

        @Override
        public String getDescription() {
            return "the packages of io.homa";
        }
    };

    @Test
    void noPackageIsInACycle() {
        slices().assignedFrom(BY_PACKAGE).should().beFreeOfCycles().check(classes);
    }

    @Test
    void theShellNeverUsesTheApiPackage() {
        noClasses().that().resideInAPackage("io.homa.internal..")
                .should().dependOnClassesThat().resideInAnyPackage("io.homa", "io.homa.testing")
                .because("the API sits on the shell and talks to it through narrow interfaces")
                .check(classes);
    }

    @Test
    void theEngineNeverUsesTheShellOrTheApi() {
        noClasses().that().resideInAPackage("io.homa.core..")
                .should().dependOnClassesThat().resideInAnyPackage("io.homa", "io.homa.internal..", "io.homa.testing")
                .check(classes);
    }
}
