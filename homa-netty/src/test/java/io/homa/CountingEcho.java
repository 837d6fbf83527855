package io.homa;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An echo handler that counts how many times it ran each request, by the request's token (its
 * first 8 bytes), so that tests can tell a request executed twice from one executed once.
 */
final class CountingEcho implements HomaHandler {
    private final Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
    private final AtomicInteger total = new AtomicInteger();

    /** A request of {@code size} bytes (at least 8) carrying {@code token}. */
    static byte[] request(long token, int size) {
        byte[] b = new byte[Math.max(8, size)];
        for (int i = 8; i < b.length; i++) {
            b[i] = (byte) (token * 31 + i);
        }
        ByteBuffer.wrap(b).putLong(token);
        return b;
    }

    @Override
    public void handle(HomaRequest request) {
        byte[] b = request.toByteArray();
        total.incrementAndGet();
        runs.computeIfAbsent(ByteBuffer.wrap(b).getLong(), t -> new AtomicInteger()).incrementAndGet();
        request.reply(b);
    }

    /** Times the request with {@code token} ran. */
    int runs(long token) {
        AtomicInteger n = runs.get(token);
        return n == null ? 0 : n.get();
    }

    /** Requests run, all tokens. */
    int total() {
        return total.get();
    }

    /** Distinct tokens run. */
    int distinct() {
        return runs.size();
    }
}
