package io.homa;

import io.homa.core.EngineConfig;
import org.junit.jupiter.api.Test;

import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Applications see only {@code io.homa} and {@code io.homa.testing}: the module descriptors export
 * nothing else, and no public signature of those packages names a type of the engine or of
 * {@code io.homa.internal}.
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class ApiSealTest {
    private static final Set<String> EXPORTED = Set.of("io.homa", "io.homa.testing");

    private static Path classesOf(Class<?> c) throws URISyntaxException {
        return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    private static ModuleDescriptor descriptorOf(Class<?> c) throws URISyntaxException {
        return ModuleFinder.of(classesOf(c)).findAll().iterator().next().descriptor();
    }

    @Test
    void shellModule_exportsTheApiAndTestingPackagesOnly() throws Exception {
        ModuleDescriptor d = descriptorOf(HomaSocket.class);
        assertEquals("io.homa", d.name());
        Set<String> exported = d.exports().stream().map(ModuleDescriptor.Exports::source).collect(Collectors.toSet());
        assertEquals(EXPORTED, exported);
        assertTrue(d.exports().stream().noneMatch(ModuleDescriptor.Exports::isQualified), d.exports().toString());
        assertTrue(d.opens().isEmpty(), d.opens().toString());
    }

    @Test
    void coreModule_exportsToTheShellOnly_andItsSimulationToTheCollectives() throws Exception {
        ModuleDescriptor d = descriptorOf(EngineConfig.class);
        assertEquals("io.homa.core", d.name());
        assertFalse(d.exports().isEmpty());
        for (ModuleDescriptor.Exports e : d.exports()) {
            assertTrue(e.isQualified(), e.toString());
            // homa-collective's simulation driver (io.homa.collective.sim) runs engines on the
            // simulated network: the engine and the simulator, never the wire format or the
            // security layer, go to it too.
            Set<String> allowed = e.source().equals("io.homa.core.wire") || e.source().equals("io.homa.core.psp")
                    ? Set.of("io.homa")
                    : Set.of("io.homa", "io.homa.collective");
            assertEquals(allowed, e.targets(), e.toString());
        }
    }

    @Test
    void publicSignatures_nameNoEngineOrInternalType() throws Exception {
        List<String> leaks = new ArrayList<>();
        int classes = 0;
        for (String pkg : EXPORTED) {
            Path dir = classesOf(HomaSocket.class).resolve(pkg.replace('.', '/'));
            List<Path> files;
            try (Stream<Path> s = Files.list(dir)) {
                files = s.filter(p -> p.toString().endsWith(".class")).toList();
            }
            for (Path f : files) {
                String name = f.getFileName().toString();
                Class<?> c = Class.forName(pkg + "." + name.substring(0, name.length() - ".class".length()));
                if (isVisible(c)) {
                    classes++;
                    check(c, leaks);
                }
            }
        }
        assertTrue(classes >= 10, "found only " + classes + " public classes");
        assertTrue(leaks.isEmpty(), String.join("\n", leaks));
    }

    private static boolean isVisible(Class<?> c) {
        for (Class<?> k = c; k != null; k = k.getDeclaringClass()) {
            if (!Modifier.isPublic(k.getModifiers())) {
                return false;
            }
        }
        return true;
    }

    private static void check(Class<?> c, List<String> leaks) {
        List<Type> types = new ArrayList<>();
        types.add(c.getGenericSuperclass());
        types.addAll(List.of(c.getGenericInterfaces()));
        for (Field f : c.getDeclaredFields()) {
            if (exposed(f.getModifiers())) {
                types.add(f.getGenericType());
            }
        }
        List<Executable> members = new ArrayList<>(List.of(c.getDeclaredMethods()));
        members.addAll(List.<Constructor<?>>of(c.getDeclaredConstructors()));
        for (Executable e : members) {
            if (exposed(e.getModifiers()) && !(e instanceof Method m && m.isSynthetic())) {
                types.addAll(List.of(e.getGenericParameterTypes()));
                types.addAll(List.of(e.getGenericExceptionTypes()));
                if (e instanceof Method m) {
                    types.add(m.getGenericReturnType());
                }
            }
        }
        if (c.isRecord()) {
            for (RecordComponent rc : c.getRecordComponents()) {
                types.add(rc.getGenericType());
            }
        }
        for (Type t : types) {
            if (t != null && (t.getTypeName().contains("io.homa.core") || t.getTypeName().contains("io.homa.internal"))) {
                leaks.add(c.getName() + " exposes " + t.getTypeName());
            }
        }
    }

    private static boolean exposed(int modifiers) {
        return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
    }

    /** The public top-level types of the exported packages, by simple name. */
    private static List<Class<?>> publicApiTypes() throws Exception {
        List<Class<?>> out = new ArrayList<>();
        for (String pkg : EXPORTED) {
            Path dir = classesOf(HomaSocket.class).resolve(pkg.replace('.', '/'));
            try (Stream<Path> s = Files.list(dir)) {
                for (Path f : s.filter(p -> p.toString().endsWith(".class") && !p.toString().contains("$")).toList()) {
                    String name = f.getFileName().toString();
                    Class<?> c = Class.forName(pkg + "." + name.substring(0, name.length() - ".class".length()));
                    if (Modifier.isPublic(c.getModifiers())) {
                        out.add(c);
                    }
                }
            }
        }
        return out;
    }

    /**
     * On the class path the module descriptor does not apply, so what is public in the API
     * packages must be API: each public type is documented in docs/netty.md or README.md, and
     * nothing of the shell is public there (its classes live in io.homa.internal, package-private
     * in io.homa where they implement the API).
     */
    @Test
    void everyPublicTypeOfTheApiPackages_isDocumentedApi() throws Exception {
        String docs = Files.readString(Path.of("..", "docs", "netty.md")) + Files.readString(Path.of("..", "README.md"));
        List<Class<?>> api = publicApiTypes();
        assertTrue(api.size() >= 15, api.toString());
        List<String> undocumented = api.stream().map(Class::getSimpleName).filter(n -> !docs.contains(n)).toList();
        assertTrue(undocumented.isEmpty(), "public in an API package but not documented as API: " + undocumented);
    }

    /** A class of the shell that must be public (for another of its packages) says it is not API. */
    @Test
    void everyPublicShellType_saysItIsForInternalUseOnly() throws Exception {
        Path internal = Path.of("src", "main", "java", "io", "homa", "internal");
        List<String> unmarked = new ArrayList<>();
        int publicTypes = 0;
        try (Stream<Path> files = Files.walk(internal)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                String src = Files.readString(f);
                if (f.getFileName().toString().equals("package-info.java")) {
                    if (!src.contains("Internal use only")) {
                        unmarked.add(f.toString());
                    }
                    continue;
                }
                if (src.matches("(?s).*\\npublic (final |abstract )?(class|interface|enum|record) .*")) {
                    publicTypes++;
                    if (!src.contains("Internal use only")) {
                        unmarked.add(f.toString());
                    }
                }
            }
        }
        assertTrue(publicTypes >= 10, "found " + publicTypes + " public shell types");
        assertTrue(unmarked.isEmpty(), "public shell types (or packages) not marked \"Internal use only\": " + unmarked);
    }
}
