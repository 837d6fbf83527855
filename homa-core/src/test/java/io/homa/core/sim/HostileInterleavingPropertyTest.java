package io.homa.core.sim;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

import java.util.SplittableRandom;

/**
 * Random interleavings of packets from two hostile peers that all name the ids of live honest RPCs
 * (as their client or as their server would send them: DATA, GRANT, RESEND, RPC_UNKNOWN, BUSY,
 * NEED_ACK, CUTOFFS and ACK, with any fields), mixed with copies and mutations of honest packets,
 * time steps and new honest RPCs. The invariants are {@link EngineFuzzTarget}'s: the hostile peers
 * never free, restart, complete, stall or alter another peer's RPC (every honest RPC completes
 * exactly once, byte for byte, with no restart, failure or timeout), they hear only about ids they
 * named, memory stays within {@code maxBufferedBytes}, {@code maxBufferedBytesPerPeer} and
 * {@code maxOutgoingBytes} after every step, and both engines drain to nothing afterwards.
 */
class HostileInterleavingPropertyTest {
    private static long wrongPeerBefore;

    @BeforeContainer
    static void before() {
        wrongPeerBefore = EngineFuzzTarget.WRONG_PEER_DROPS.get();
    }

    /** The programs did aim at honest RPCs: the engines refused many packets as WRONG_PEER. */
    @AfterContainer
    static void theHostilePacketsReachedHonestRpcs() {
        long refused = EngineFuzzTarget.WRONG_PEER_DROPS.get() - wrongPeerBefore;
        System.out.println("hostile interleavings: " + refused + " packets naming another peer's RPC refused");
        if (refused < 100) {
            throw new AssertionError("only " + refused + " hostile packets named a live honest RPC");
        }
    }
    @Property(tries = 100)
    void packetsNamingOtherPeersRpcs_neverTouchThem(@ForAll long seed) {
        Seeds.run(seed, s -> {
            SplittableRandom r = new SplittableRandom(s);
            byte[] program = new byte[500 + r.nextInt(3_000)];
            r.nextBytes(program);
            EngineFuzzTarget.run(program, true);
        });
    }
}
