package io.homa.bench.load;

import io.homa.HomaConfig;
import io.homa.HomaSocket;
import io.netty.buffer.ByteBuf;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * Homa for the load generator: one {@link HomaSocket} per node, bound to the node's address,
 * that both serves (handler inline on the event loop) and calls. The pacer is told the link rate.
 */
public final class HomaLoadTransport implements LoadTransport {
    private static final byte[] SHORT_REPLY = new byte[100];
    private final HomaSocket socket;
    private final Duration deadline;

    public HomaLoadTransport(InetSocketAddress bind, boolean serve, double linkGbps, Duration deadline) {
        this.deadline = deadline;
        HomaConfig config = HomaConfig.builder()
                .bindAddress(bind)
                .mtu(1500)
                .linkMbps(Math.max(1, Math.round(linkGbps * 1000)))
                .inlineExecution(true)
                .defaultDeadline(deadline)
                .build();
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

    @Override
    public CompletableFuture<Integer> call(InetSocketAddress server, int length, int responseLength) {
        return socket.call(server, LoadTransport.request(length, responseLength), deadline).thenApply(b -> b.length);
    }

    @Override
    public void close() {
        socket.close();
    }
}
