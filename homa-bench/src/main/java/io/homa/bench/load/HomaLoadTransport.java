package io.homa.bench.load;

import io.homa.HomaConfig;
import io.homa.HomaSocket;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Homa for the load generator: one {@link HomaSocket} per node, bound to the node's address,
 * that both serves (handler inline on the event loop) and calls. The pacer is told the link rate.
 */
public final class HomaLoadTransport implements LoadTransport {
    private static final int ONE_WAY_RESPONSE = 100;
    private static final byte[] SHORT_REPLY = new byte[ONE_WAY_RESPONSE];
    private final HomaSocket socket;
    private final Duration deadline;
    /**
     * A one-way request's bytes (the 100 B response length, then zeros), shared by every one-way
     * call as a read-only view of its first {@code length} bytes: the generator's thread does not
     * allocate (and zero) up to 10 MB per call, which would make it late for want of memory and
     * GC. Grown by the calling thread only; views of an older array stay valid.
     */
    private byte[] oneWayRequest = LoadTransport.request(SizeDistribution.MIN_REQUEST, ONE_WAY_RESPONSE);

    /**
     * @param maxIncoming the receiver's grant budget in bytes ({@code HomaConfig.maxIncoming}), or 0
     *                    for what HomaConfig derives from the link rate
     */
    public HomaLoadTransport(InetSocketAddress bind, boolean serve, double linkGbps, int maxIncoming, Duration deadline) {
        this.deadline = deadline;
        HomaConfig.Builder b = HomaConfig.builder()
                .bindAddress(bind)
                .mtu(1500)
                .linkMbps(Math.max(1, Math.round(linkGbps * 1000)))
                .inlineExecution(true)
                .defaultDeadline(deadline);
        if (maxIncoming > 0) {
            b.maxIncoming(maxIncoming);
        }
        HomaConfig config = b.build();
        socket = HomaSocket.open(config);
        if (serve) {
            socket.serve(request -> {
                ByteBuf p = request.payload();
                int want;
                try {
                    want = p.readableBytes() >= 4 ? p.getInt(p.readerIndex()) : 100;
                } finally {
                    p.release();
                }
                request.reply(want == 100 ? SHORT_REPLY : new byte[Math.max(1, want)]);
            });
        }
    }

    @Override
    public java.util.Map<String, Object> metrics() {
        io.homa.HomaMetrics m = socket.metrics();
        java.util.Map<String, Object> out = new java.util.LinkedHashMap<>();
        m.counters().forEach((name, n) -> {
            if (n != 0) {
                out.put(name, n);
            }
        });
        for (io.homa.HomaMetrics.Shell c : io.homa.HomaMetrics.Shell.values()) {
            if (m.shell(c) != 0) {
                out.put("shell." + c.name(), m.shell(c));
            }
        }
        m.dropsByReason().forEach((r, n) -> {
            if (n != 0) {
                out.put("drop." + r, n);
            }
        });
        return out;
    }

    public InetSocketAddress localAddress() {
        return socket.localAddress();
    }

    /** Called by one thread at a time (the load generator's). */
    @Override
    public CompletableFuture<Integer> call(InetSocketAddress server, int length, int responseLength) {
        if (responseLength != ONE_WAY_RESPONSE) {
            return socket.call(server, LoadTransport.request(length, responseLength), deadline).thenApply(b -> b.length);
        }
        int len = Math.max(SizeDistribution.MIN_REQUEST, length);
        if (oneWayRequest.length < len) {
            oneWayRequest = LoadTransport.request(Math.max(len, 2 * oneWayRequest.length), ONE_WAY_RESPONSE);
        }
        return socket.call(server, Unpooled.wrappedBuffer(oneWayRequest, 0, len), deadline).thenApply(b -> {
            int n = b.readableBytes();
            b.release();
            return n;
        });
    }

    @Override
    public void close() {
        socket.close();
    }
}
