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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UdpTransportTest {
    @Test
    void echo__everySizeUpTo1400() throws Exception {
        try (EchoPair pair = EchoPair.open("udp-raw")) {
            for (int size : new int[] {0, 1, 100, 1000, UdpRawClient.MAX_MESSAGE}) {
                byte[] request = random(size, size);
                assertArrayEquals(request, await(pair.client().call(request)), "size " + size);
            }
        }
    }

    @Test
    void echo__manyOutstanding_matchedById() throws Exception {
        try (EchoPair pair = EchoPair.open("udp-raw")) {
            List<byte[]> requests = new ArrayList<>();
            List<CompletableFuture<byte[]>> replies = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                byte[] request = random(100 + i, i);
                requests.add(request);
                replies.add(pair.client().call(request));
            }
            for (int i = 0; i < requests.size(); i++) {
                assertArrayEquals(requests.get(i), await(replies.get(i)), "call " + i);
            }
        }
    }

    @Test
    void call__tooLong_isRejected() {
        try (EchoPair pair = EchoPair.open("udp-raw")) {
            assertThrows(IllegalArgumentException.class, () -> pair.client().call(new byte[UdpRawClient.MAX_MESSAGE + 1]));
            Transport t = pair.transport();
            assertTrue(t.supports(1400));
            assertFalse(t.supports(1401));
        }
    }
}
