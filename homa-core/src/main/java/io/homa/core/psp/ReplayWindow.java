package io.homa.core.psp;

/**
 * The IVs one SPI has delivered, as IPsec's anti-replay window (RFC 4303, 3.4.3): the highest IV
 * seen and a bitmap of the {@value #BITS} below it. An IV above the highest is new; one inside
 * the window is new unless its bit is set; one below the window is refused (its packet may be a
 * replay and cannot be told apart). The sender's IVs count up by one per packet, so a window this
 * wide tolerates the reordering of Homa's priority sockets and GSO bursts; a packet later than
 * that is refused and Homa resends its bytes. Thread-safe: a peer's packets may reach several
 * event loops.
 */
final class ReplayWindow {
    static final int BITS = 4096;
    private final long[] bits = new long[BITS / 64];
    private long highest = -1; // compared as unsigned; -1 = none yet (an IV of all ones is refused)

    /** Whether {@code iv} may be new (no change); a cheap check before authentication. */
    synchronized boolean mayAccept(long iv) {
        return check(iv);
    }

    /** Marks {@code iv} delivered if it is new; false if it was seen or is below the window. */
    synchronized boolean accept(long iv) {
        if (!check(iv)) {
            return false;
        }
        if (highest == -1 || Long.compareUnsigned(iv, highest) > 0) {
            // Unsigned: a jump of 2^63 or more must clear the window, not loop (it is negative signed).
            if (highest == -1 || Long.compareUnsigned(iv - highest, BITS) >= 0) {
                java.util.Arrays.fill(bits, 0);
            } else {
                for (long v = highest + 1; v != iv + 1; v++) {
                    clear(v); // slots the window slides over become free for the new IVs
                }
            }
            highest = iv;
        }
        set(iv);
        return true;
    }

    private boolean check(long iv) {
        if (iv == -1) {
            return false;
        }
        if (highest == -1 || Long.compareUnsigned(iv, highest) > 0) {
            return true;
        }
        if (Long.compareUnsigned(highest - iv, BITS) >= 0) {
            return false;
        }
        return (bits[slot(iv)] & mask(iv)) == 0;
    }

    private void set(long iv) {
        bits[slot(iv)] |= mask(iv);
    }

    private void clear(long iv) {
        bits[slot(iv)] &= ~mask(iv);
    }

    private static int slot(long iv) {
        return (int) ((iv >>> 6) & (BITS / 64 - 1));
    }

    private static long mask(long iv) {
        return 1L << (iv & 63);
    }
}
