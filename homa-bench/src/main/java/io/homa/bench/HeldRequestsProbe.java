package io.homa.bench;

import io.homa.HomaConfig;
import io.homa.HomaRequest;
import io.homa.HomaSocket;
import io.netty.util.internal.PlatformDependent;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * How much direct memory requests hold while a handler keeps them to answer later
 * (docs/benchmarks.md, "Found on the way"): a server socket whose handler keeps every request, a
 * client that sends {@code COUNT} requests of 100 B one at a time (each waits until the handler
 * has the one before, so that each comes in a read round of its own), and Netty's count of direct
 * memory in use before and with the requests held; then every request is answered. Both sockets
 * in this JVM, on loopback, with the default configuration (handler threads) or, with
 * {@code inline}, inline execution on the server. Not a benchmark of record: the figure depends
 * on Netty's allocator, which reserves memory in chunks.
 *
 * <pre>
 * java -cp homa-bench/target/homa-bench.jar io.homa.bench.HeldRequestsProbe COUNT [inline]
 * </pre>
 */
public final class HeldRequestsProbe {
    private HeldRequestsProbe() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: HeldRequestsProbe COUNT [inline]");
            System.exit(2);
        }
        int count = Integer.parseInt(args[0]);
        boolean inline = args.length > 1 && args[1].equals("inline");
        List<HomaRequest> held = new ArrayList<>();
        InetSocketAddress any = new InetSocketAddress("127.0.0.1", 0);
        try (HomaSocket server = HomaSocket.open(HomaConfig.builder().bindAddress(any).inlineExecution(inline).build());
             HomaSocket client = HomaSocket.open(HomaConfig.builder().bindAddress(any).build())) {
            server.serve(r -> {
                synchronized (held) {
                    held.add(r);
                    held.notifyAll();
                }
            });
            InetSocketAddress to = new InetSocketAddress("127.0.0.1", server.localAddress().getPort());
            long before = PlatformDependent.usedDirectMemory();
            List<CompletableFuture<byte[]>> calls = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                calls.add(client.call(to, new byte[100]));
                synchronized (held) {
                    while (held.size() <= i) {
                        held.wait(10_000);
                    }
                }
            }
            long holding = PlatformDependent.usedDirectMemory();
            System.out.printf("%d requests of 100 B held (%s): direct memory in use %,d B before, %,d B with them held"
                            + " (+%,d B, %,d B per request)%n", count, inline ? "inline handler" : "handler threads",
                    before, holding, holding - before, (holding - before) / count);
            synchronized (held) {
                for (HomaRequest r : held) {
                    r.reply(new byte[1]);
                }
            }
            for (CompletableFuture<byte[]> c : calls) {
                c.get(30, TimeUnit.SECONDS);
            }
        }
    }
}
