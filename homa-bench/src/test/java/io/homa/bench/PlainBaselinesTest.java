package io.homa.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import static io.homa.bench.TcpTransportTest.await;
import static io.homa.bench.TcpTransportTest.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The baselines a user would write: tcp-blocking and udp-spin echo every byte, also from many threads. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PlainBaselinesTest {
    @Test
    void tcpBlocking_echoesEverySize_upTo4MB() throws Exception {
        try (EchoPair pair = EchoPair.open(Transports.TCP_BLOCKING)) {
            assertTrue(pair.client().blocking());
            for (int size : new int[] {0, 1, 100, 65_536, 65_537, 1_000_000, 4 << 20}) {
                byte[] request = random(size, size);
                CompletableFuture<byte[]> reply = pair.client().call(request);
                assertTrue(reply.isDone(), "a blocking call returns with its answer");
                assertArrayEquals(request, await(reply), "size " + size);
            }
        }
    }

    @Test
    void tcpBlocking_manyThreadsAtOnce_eachGetsItsOwnAnswer() throws Exception {
        try (EchoPair pair = EchoPair.open(Transports.TCP_BLOCKING)) {
            ConcurrentLinkedQueue<String> wrong = new ConcurrentLinkedQueue<>();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int seed = t;
                Thread th = new Thread(() -> {
                    for (int i = 0; i < 200; i++) {
                        byte[] request = random(100 + seed * 1000 + i, seed * 1000 + i);
                        byte[] reply = pair.client().call(request).join();
                        if (!java.util.Arrays.equals(request, reply)) {
                            wrong.add("thread " + seed + " call " + i);
                        }
                    }
                });
                threads.add(th);
                th.start();
            }
            for (Thread th : threads) {
                th.join();
            }
            assertTrue(wrong.isEmpty(), wrong.toString());
        }
    }

    @Test
    void udpSpin_echoesEverySizeUpTo1400_andRejectsLonger() throws Exception {
        try (EchoPair pair = EchoPair.open(Transports.UDP_SPIN)) {
            assertTrue(pair.client().blocking());
            for (int size : new int[] {0, 1, 100, 1000, UdpSpinClient.MAX_MESSAGE}) {
                byte[] request = random(size, size);
                assertArrayEquals(request, await(pair.client().call(request)), "size " + size);
            }
            for (int i = 0; i < 1000; i++) { // one after another: each answer matched to its call
                byte[] request = random(100, i);
                assertArrayEquals(request, await(pair.client().call(request)), "call " + i);
            }
            assertThrows(IllegalArgumentException.class, () -> pair.client().call(new byte[UdpSpinClient.MAX_MESSAGE + 1]));
            assertFalse(pair.transport().supports(UdpSpinClient.MAX_MESSAGE + 1));
        }
    }

    @Test
    void udpSpin_runsInTheUnloadedScenariosOnly() {
        Transport spin = Transports.create(Transports.UDP_SPIN);
        for (Scenario s : Scenario.FULL) {
            assertTrue(s.appliesTo(spin) == (s.kind() == Scenario.Kind.UNLOADED && spin.supports(s.size())), s.id());
        }
    }
}
