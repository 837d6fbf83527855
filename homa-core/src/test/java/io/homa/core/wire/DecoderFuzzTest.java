package io.homa.core.wire;

import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Coverage-guided fuzzing of the packet decoder with Jazzer (body: {@link DecoderFuzzTarget}).
 *
 * <p>In a plain {@code mvn verify} it runs twice: in Jazzer's regression mode over the stored
 * inputs in {@code src/test/resources/io/homa/core/wire/DecoderFuzzTestInputs/decoder/}, and
 * in fuzzing mode for {@code maxDuration} (the {@code fuzz-decoder} execution of homa-core's pom,
 * which sets {@code JAZZER_FUZZ=1}). docs/security.md has the command for a longer run.
 */
class DecoderFuzzTest {
    @FuzzTest(maxDuration = "10s")
    void decoder(byte[] input) {
        DecoderFuzzTarget.check(input);
    }
}
