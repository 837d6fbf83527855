package io.homa.bench;

import io.homa.HomaConfig;
import io.homa.HomaSocket;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code homa}: the project's own transport through its public API ({@link HomaSocket}). Server
 * and client are separate sockets on 127.0.0.1, each with its own event loop, like the baselines.
 *
 * <p>Settings that differ from {@link HomaConfig#defaults()}, so that the comparison is like for
 * like:
 * <ul>
 * <li>{@code inlineExecution(true)}: the echo handler runs and call futures complete on the event
 *     loop, as the baselines' do (the default hands each off to an executor thread: one more
 *     wake-up per RPC, tens of microseconds on a small machine). The handler never blocks.</li>
 * </ul>
 * The MTU follows the interface (65,535 on loopback, as HomaConfig does by default); the system
 * property {@code homa.bench.mtu} (e.g. 1500) overrides it, {@code homa.bench.maxIncoming} sets the
 * receiver's grant budget; {@code homa.bench.busyPoll=true} makes the event loops spin.
 */
public final class HomaTransport implements Transport {

    private final HomaConfig config;

    public HomaTransport() {
        HomaConfig.Builder b = HomaConfig.builder()
                .bindAddress(NettyIo.anyLoopbackPort())
                .inlineExecution(true);
        Integer mtu = Integer.getInteger("homa.bench.mtu");
        if (mtu != null) {
            b.mtu(mtu);
        }
        Integer maxIncoming = Integer.getInteger("homa.bench.maxIncoming");
        if (maxIncoming != null) {
            b.maxIncoming(maxIncoming);
        }
        if (Boolean.getBoolean("homa.bench.busyPoll")) {
            b.busyPoll(true);
        }
        this.config = b.build();
    }

    @Override
    public String name() {
        return Transports.HOMA;
    }

    @Override
    public int maxMessageLength() {
        return config.maxMessageLength();
    }

    /** The configuration every socket of this transport uses. */
    public HomaConfig config() {
        return config;
    }

    @Override
    public EchoServer startServer() {
        HomaSocket socket = HomaSocket.open(config);
        try {
            // Zero-copy echo: the request's own bytes go back (one copy only when it arrived in
            // several chunks, as toByteArray would make).
            socket.serve(request -> request.reply(request.payload()));
        } catch (RuntimeException e) {
            socket.close();
            throw e;
        }
        return new Server(socket);
    }

    @Override
    public EchoClient connect(InetSocketAddress server) {
        return new Client(HomaSocket.open(config), server);
    }

    @Override
    public String toString() {
        return name();
    }

    private static final class Server implements EchoServer {
        private final HomaSocket socket;
        private final InetSocketAddress address;

        Server(HomaSocket socket) {
            this.socket = socket;
            this.address = socket.localAddress();
        }

        @Override
        public InetSocketAddress address() {
            return address;
        }

        @Override
        public void close() {
            socket.close();
        }
    }

    private static final class Client implements EchoClient {
        private final HomaSocket socket;
        private final InetSocketAddress server;
        private final AtomicBoolean closed = new AtomicBoolean();

        Client(HomaSocket socket, InetSocketAddress server) {
            this.socket = socket;
            this.server = server;
        }

        @Override
        public CompletableFuture<byte[]> call(byte[] request) {
            if (request.length > socket.config().maxMessageLength()) {
                throw new IllegalArgumentException("request of " + request.length + " bytes exceeds Homa's maxMessageLength "
                        + socket.config().maxMessageLength());
            }
            return socket.call(server, request);
        }

        @Override
        public void close() {
            if (closed.compareAndSet(false, true)) {
                socket.close();
            }
        }
    }
}
