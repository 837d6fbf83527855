package io.homa.internal.tls;

import io.homa.core.psp.PspSendKey;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What key exchanges leave behind: SPIs bound to addresses, one identity per address, keys by session. */
@org.junit.jupiter.api.extension.ExtendWith(io.homa.LeakCheck.class)
class PeerKeysTest {
    private static final InetSocketAddress A = new InetSocketAddress("10.0.0.1", 4000);
    private static final InetSocketAddress B = new InetSocketAddress("10.0.0.1", 4001);

    @Test
    void anSpiOpensOnlyFromTheAddressItWasIssuedTo() {
        PeerKeys p = new PeerKeys();
        p.bind(77, A);
        assertTrue(p.allows(77, A));
        assertFalse(p.allows(77, B), "a peer passing its packets off as another's");
        assertFalse(p.allows(78, A), "an SPI never issued");
        p.unbind(77);
        assertFalse(p.allows(77, A));
    }

    @Test
    void anAddressHasOneIdentityAtATime() {
        PeerKeys p = new PeerKeys();
        assertTrue(p.claim(A, "CN=a", null));
        assertTrue(p.claim(A, "CN=a", null), "a second session of the same peer");
        assertFalse(p.claim(A, "CN=b", null), "another certificate claiming the address");
        assertEquals("CN=a", p.identity(A));
        p.unclaim(A);
        assertEquals("CN=a", p.identity(A), "one session still stands behind it");
        p.unclaim(A);
        assertNull(p.identity(A));
        assertTrue(p.claim(A, "CN=b", null), "free again once its sessions ended");
    }

    @Test
    void keysGoWithTheSessionThatBroughtThem() {
        PeerKeys p = new PeerKeys();
        Object first = new Object();
        Object second = new Object();
        PspSendKey[] keys = {new PspSendKey(5, new byte[16]), new PspSendKey(6, new byte[16])};
        p.install(A, "CN=a", keys, first);
        assertSame(keys[1], p.sendKey(A, 1));
        assertNull(p.sendKey(B, 0));
        PspSendKey[] newer = {new PspSendKey(7, new byte[16]), new PspSendKey(8, new byte[16])};
        p.install(A, "CN=a", newer, second);
        p.forget(A, first); // the older session ends: the newer one's keys stay
        assertSame(newer[0], p.sendKey(A, 0));
        p.forget(A, second);
        assertFalse(p.canSendTo(A));
    }
}
