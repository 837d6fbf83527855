package io.homa.collective;

import io.homa.HomaSocket;
import io.homa.Loopback;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntFunction;

/** N ranks in this JVM on loopback, over Homa sockets or TCP, each with its own group. */
final class Ranks implements AutoCloseable {
    enum Transport { HOMA, TCP }

    final List<CollectiveGroup> groups = new ArrayList<>();
    final List<HomaSocket> sockets = new ArrayList<>();
    final List<InetSocketAddress> members = new ArrayList<>();

    Ranks(Transport transport, int n, CollectiveOptions options) {
        if (transport == Transport.HOMA) {
            for (int i = 0; i < n; i++) {
                HomaSocket s = HomaSocket.open(Loopback.config().build());
                sockets.add(s);
                members.add(Loopback.addressOf(s));
            }
            for (int r = 0; r < n; r++) {
                groups.add(CollectiveGroup.overHoma(sockets.get(r), members, r, options));
            }
        } else {
            for (int i = 0; i < n; i++) {
                members.add(new InetSocketAddress(Loopback.HOST, freePort()));
            }
            for (int r = 0; r < n; r++) {
                groups.add(CollectiveGroup.overTcp(members, r, options));
            }
        }
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Starts the operation on every rank, each from a thread of its own (as ranks are separate processes), and returns the futures. */
    List<CompletableFuture<Void>> start(IntFunction<CompletableFuture<Void>> op) {
        List<CompletableFuture<Void>> fs = new ArrayList<>();
        for (int r = 0; r < groups.size(); r++) {
            int rank = r;
            CompletableFuture<Void> f = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                try {
                    op.apply(rank).whenComplete((v, e) -> {
                        if (e != null) {
                            f.completeExceptionally(e);
                        } else {
                            f.complete(null);
                        }
                    });
                } catch (RuntimeException e) {
                    f.completeExceptionally(e);
                }
            }, "rank-" + rank);
            t.start();
            fs.add(f);
        }
        return fs;
    }

    /** Runs the operation on every rank and waits for all of them (throwing a rank's failure). */
    void run(IntFunction<CompletableFuture<Void>> op) {
        CompletableFuture.allOf(start(op).toArray(new CompletableFuture[0])).join();
    }

    @Override
    public void close() {
        groups.forEach(CollectiveGroup::close);
        sockets.forEach(HomaSocket::close);
    }
}
