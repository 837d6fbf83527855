package io.homa.core.sim;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.junit.jupiter.api.AfterAll;

/**
 * Coverage-guided fuzzing of the engine under a hostile peer with Jazzer (body and invariants:
 * {@link EngineFuzzTarget}).
 *
 * <p>In a plain {@code mvn verify} it runs twice: in Jazzer's regression mode over the stored
 * inputs in {@code src/test/resources/io/homa/core/sim/EngineFuzzTestInputs/engine/}, and in
 * fuzzing mode for a few seconds (the {@code fuzz-engine} execution of homa-core's pom, which sets
 * {@code JAZZER_FUZZ=1}). docs/security.md has the command for a longer run.
 */
class EngineFuzzTest {
    @FuzzTest(maxDuration = "10s")
    void engine(byte[] input) {
        EngineFuzzTarget.run(input);
    }

    @AfterAll
    static void report() {
        System.out.println(EngineFuzzTarget.report());
    }
}
