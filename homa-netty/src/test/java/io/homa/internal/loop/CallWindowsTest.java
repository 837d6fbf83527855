package io.homa.internal.loop;

import io.homa.internal.rpc.ClientCall;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The client's window per server ({@code maxCallsPerServer}), without sockets or threads. */
@org.junit.jupiter.api.extension.ExtendWith(io.homa.LeakCheck.class)
class CallWindowsTest {
    private static final InetSocketAddress SERVER = new InetSocketAddress("127.0.0.1", 4000);
    private static final InetSocketAddress OTHER = new InetSocketAddress("127.0.0.1", 4001);

    private static ClientCall<byte[]> call(InetSocketAddress server) {
        return new ClientCall<>(server, new byte[1], null, Duration.ofSeconds(5), System.nanoTime() + 5_000_000_000L,
                false, m -> null);
    }

    @Test
    void callsBeyondTheLimitWaitInOrderAndTakeOverEndedSlots() {
        CallWindows w = new CallWindows(2);
        ClientCall<?> a = call(SERVER), b = call(SERVER), c = call(SERVER), d = call(SERVER);
        assertTrue(w.admit(a));
        assertTrue(w.admit(b));
        assertFalse(w.admit(c));
        assertFalse(w.admit(d));
        assertTrue(w.admit(call(OTHER)), "another server has a window of its own");
        assertSame(c, w.release(SERVER), "the first waiting call takes the slot");
        assertTrue(w.removeWaiting(d), "a waiting call whose deadline passed leaves the queue");
        assertFalse(w.removeWaiting(d));
        assertNull(w.release(SERVER));
        assertNull(w.release(SERVER));
        assertTrue(w.admit(call(SERVER)), "both slots are free again");
        assertTrue(w.admit(call(SERVER)));
        assertFalse(w.admit(call(SERVER)), "and taken again");
    }

    @Test
    void theDefaultWindowHoldsTwoHundredCallsPerServer_theRestWaitInArrivalOrder() {
        int limit = io.homa.HomaConfig.builder().build().maxCallsPerServer();
        assertEquals(200, limit, "a socket's default");
        CallWindows w = new CallWindows(limit);
        for (int i = 0; i < 200; i++) {
            assertTrue(w.admit(call(SERVER)), "call " + i);
        }
        List<ClientCall<?>> waiting = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            ClientCall<?> c = call(SERVER);
            assertFalse(w.admit(c));
            waiting.add(c);
        }
        List<ClientCall<?>> started = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            started.add(w.release(SERVER));
        }
        assertEquals(waiting, started);
        assertNull(w.release(SERVER), "nothing waits any more");
    }

    @Test
    void aLimitOfZeroAdmitsEverything() {
        CallWindows w = new CallWindows(0);
        for (int i = 0; i < 10_000; i++) {
            assertTrue(w.admit(call(SERVER)));
        }
        assertNull(w.release(SERVER));
    }
}
