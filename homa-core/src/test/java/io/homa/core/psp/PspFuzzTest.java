package io.homa.core.psp;

import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Coverage-guided fuzzing of the security header with Jazzer (body: {@link PspFuzzTarget}); in a
 * plain {@code mvn verify} it runs in regression mode over the stored inputs and in fuzzing mode
 * for {@code maxDuration} (the {@code fuzz-psp} execution of homa-core's pom).
 */
class PspFuzzTest {
    @FuzzTest(maxDuration = "10s")
    void securityHeader(byte[] input) {
        PspFuzzTarget.check(input);
    }
}
