package io.homa.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.homa.bench.TcpTransportTest.await;
import static io.homa.bench.TcpTransportTest.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** The Homa adapter echoes like the baselines (the protocol itself is tested in homa-netty). */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HomaTransportTest {
    @Test
    void echo__everySize_oneAtATime() throws Exception {
        try (EchoPair pair = EchoPair.open("homa")) {
            for (int size : new int[] {0, 1, 100, 100_000, 1_000_000}) {
                byte[] request = random(size, size);
                assertArrayEquals(request, await(pair.client().call(request)), "size " + size);
            }
        }
    }

    @Test
    void echo__manyOutstanding_andASecondClient() throws Exception {
        try (EchoPair pair = EchoPair.open("homa")) {
            EchoClient other = pair.newClient();
            List<byte[]> requests = new ArrayList<>();
            List<CompletableFuture<byte[]>> replies = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                byte[] request = random(i % 8 == 0 ? 200_000 : 100 + i, i);
                requests.add(request);
                replies.add((i % 2 == 0 ? pair.client() : other).call(request));
            }
            for (int i = 0; i < requests.size(); i++) {
                assertArrayEquals(requests.get(i), await(replies.get(i)), "call " + i);
            }
            assertEquals("homa", pair.transport().name());
        }
    }
}
