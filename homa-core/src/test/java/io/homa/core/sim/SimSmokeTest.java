package io.homa.core.sim;

import io.homa.core.EngineConfig;
import io.homa.core.EngineEvent;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.*;

class SimSmokeTest {
    @Test
    void echoOfVariousSizes() {
        for (int size : new int[]{0, 1, 100, 1431, 1432, 1433, 40_000, 100_000, 1_000_000}) {
            SimNetwork net = new SimNetwork(size);
            EngineConfig cfg = EngineConfig.builder().linkMbps(10_000).build();
            SimHost a = net.addHost(cfg);
            SimHost b = net.addHost(cfg);
            b.serveEcho();
            List<EngineEvent> got = new ArrayList<>();
            a.onEvent(got::add);
            byte[] req = new byte[size];
            new Random(size).nextBytes(req);
            long id = a.call(b, req);
            assertTrue(net.runUntilIdle(10_000_000_000L), "idle for size " + size);
            assertEquals(1, got.size(), "size " + size);
            assertEquals(EngineEvent.Kind.RESPONSE, got.get(0).kind());
            assertEquals(id, got.get(0).rpcId());
            assertArrayEquals(req, got.get(0).message().toByteArray(), "size " + size);
            assertTrue(a.engine().isQuiescent(), a.engine().describe());
            assertTrue(b.engine().isQuiescent(), b.engine().describe());
        }
    }
}
