package io.homa.core.sim;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.lifecycle.AfterContainer;

import java.util.SplittableRandom;

/**
 * The engine fuzz target's body ({@link EngineFuzzTarget}) over seeded random programs, on every
 * JDK (the Jazzer run needs a JDK its agent supports; see docs/security.md). A failure names its
 * seed ({@link Seeds}).
 */
class EngineFuzzPropertyTest {
    @Property(tries = 150)
    void hostileProgram_invariantsHold(@ForAll long seed) {
        Seeds.run(seed, s -> {
            SplittableRandom r = new SplittableRandom(s);
            byte[] program = new byte[r.nextInt(4_000)];
            r.nextBytes(program);
            EngineFuzzTarget.run(program);
        });
    }

    @AfterContainer
    static void report() {
        System.out.println(EngineFuzzTarget.report());
    }
}
