package io.homa.core.psp;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;

/** The security header's fuzz target under jqwik: seeded random inputs, in every plain test run. */
class PspFuzzPropertyTest {
    @Property(tries = 3000, seed = "30")
    void openingNeverThrowsAndAcceptsOnlyTheGenuinePacket(@ForAll @Size(max = 200) byte[] input) {
        PspFuzzTarget.check(input);
    }
}
