package io.homa.grpc;

import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ClientStreamTracer;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.internal.ClientStream;
import io.grpc.internal.ClientStreamListener;
import io.grpc.internal.ClientTransportFactory;
import io.grpc.internal.ConnectionClientTransport;
import io.grpc.internal.DisconnectError;
import io.grpc.internal.ManagedClientTransport;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The order in which a client transport tells grpc-java what happened to it. grpc-java's
 * subchannel must hear {@code transportShutdown} before {@code transportTerminated} (a transport
 * that terminated before is never taken out of the subchannel, and the channel then never
 * terminates), and "in use" and "not in use" in the order they happened (else it may think an idle
 * transport busy for good).
 */
class TransportLifecycleTest {
    private Server server;
    private HomaTransportFactory factory;

    @BeforeEach
    void startServerAndFactory() throws Exception {
        server = HomaServerBuilder.forAddress(new InetSocketAddress(Transport.HOST, 0)).build().start();
        factory = new HomaTransportFactory(Transport.loopback(), 4 << 20);
    }

    @AfterEach
    void closeThem() throws Exception {
        factory.close();
        server.shutdownNow();
        assertTrue(server.awaitTermination(10, TimeUnit.SECONDS));
    }

    /** A client transport to the server, not started. */
    private ConnectionClientTransport newTransport() {
        return factory.newClientTransport(new InetSocketAddress(Transport.HOST, server.getPort()),
                new ClientTransportFactory.ClientTransportOptions(), null);
    }

    private static ClientStream newUnaryStream(ConnectionClientTransport transport) {
        return transport.newStream(SimpleServiceGrpc.getUnaryRpcMethod(), new Metadata(), CallOptions.DEFAULT,
                new ClientStreamTracer[0]);
    }

    /** Records what the transport tells grpc-java; holds {@code transportShutdown} until released. */
    private static final class Listener implements ManagedClientTransport.Listener {
        final List<String> events = new CopyOnWriteArrayList<>();
        final CountDownLatch ready = new CountDownLatch(1);
        final CountDownLatch inShutdown = new CountDownLatch(1);
        final CountDownLatch releaseShutdown = new CountDownLatch(1);
        final CountDownLatch terminated = new CountDownLatch(1);

        @Override
        public void transportShutdown(Status s, DisconnectError e) {
            events.add("shutdown begins");
            inShutdown.countDown();
            try {
                assertTrue(releaseShutdown.await(30, TimeUnit.SECONDS));
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            events.add("shutdown ends");
        }

        @Override
        public void transportTerminated() {
            events.add("terminated");
            terminated.countDown();
        }

        @Override
        public void transportReady() {
            ready.countDown();
        }

        @Override
        public void transportInUse(boolean inUse) {
        }
    }

    /** Records the in-use reports; holds the first "not in use" until released. */
    private static final class InUseListener implements ManagedClientTransport.Listener {
        final List<String> events = new CopyOnWriteArrayList<>();
        final CountDownLatch ready = new CountDownLatch(1);
        final CountDownLatch inNotInUse = new CountDownLatch(1);
        final CountDownLatch releaseNotInUse = new CountDownLatch(1);
        final CountDownLatch inUseAgain = new CountDownLatch(2);

        @Override
        public void transportInUse(boolean inUse) {
            if (inUse) {
                events.add("in use");
                inUseAgain.countDown();
            } else {
                events.add("not in use begins");
                inNotInUse.countDown();
                try {
                    assertTrue(releaseNotInUse.await(30, TimeUnit.SECONDS));
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
                events.add("not in use ends");
            }
        }

        @Override
        public void transportShutdown(Status s, DisconnectError e) {
        }

        @Override
        public void transportTerminated() {
        }

        @Override
        public void transportReady() {
            ready.countDown();
        }
    }

    /** A stream that reads nothing and ignores its end. */
    private static ClientStreamListener ignoring() {
        return new ClientStreamListener() {
            @Override
            public void messagesAvailable(MessageProducer producer) {
                for (InputStream m; (m = producer.next()) != null; ) {
                    try {
                        m.close();
                    } catch (java.io.IOException ignored) {
                        // nothing held
                    }
                }
            }

            @Override
            public void onReady() {
            }

            @Override
            public void headersRead(Metadata headers) {
            }

            @Override
            public void closed(Status status, RpcProgress progress, Metadata trailers) {
            }
        };
    }

    @Test
    void grpcHearsNotInUseAndInUseAgainInTheOrderTheyHappenedWhateverTheThreads() throws Exception {
        ConnectionClientTransport transport = newTransport();
        InUseListener listener = new InUseListener();
        assertEquals(null, transport.start(listener));
        assertTrue(listener.ready.await(30, TimeUnit.SECONDS), "the transport's ping was answered");
        ClientStream first = newUnaryStream(transport);
        first.start(ignoring()); // in use
        Thread ending = new Thread(() -> first.cancel(Status.CANCELLED)); // not in use
        ending.setDaemon(true);
        ending.start();
        ClientStream second = null;
        try {
            assertTrue(listener.inNotInUse.await(30, TimeUnit.SECONDS));
            second = newUnaryStream(transport);
            second.start(ignoring()); // in use again, on this thread, while gRPC hears "not in use"
        } finally {
            listener.releaseNotInUse.countDown();
        }
        ending.join(30_000);
        assertTrue(listener.inUseAgain.await(30, TimeUnit.SECONDS), "in use again: " + listener.events);
        assertEquals(List.of("in use", "not in use begins", "not in use ends", "in use"), listener.events);
        second.cancel(Status.CANCELLED);
    }

    @Test
    void aTransportFilterThatThrowsShutsTheTransportDownInsteadOfLeavingGrpcWaiting() throws Exception {
        ConnectionClientTransport transport = newTransport();
        List<String> events = new CopyOnWriteArrayList<>();
        CountDownLatch terminated = new CountDownLatch(1);
        assertEquals(null, transport.start(new ManagedClientTransport.Listener() {
            @Override
            public Attributes filterTransport(Attributes attributes) { // a user's ClientTransportFilter
                throw new IllegalStateException("filter failed");
            }

            @Override
            public void transportShutdown(Status s, DisconnectError e) {
                events.add("shutdown " + s.getCode());
            }

            @Override
            public void transportTerminated() {
                events.add("terminated");
                terminated.countDown();
            }

            @Override
            public void transportReady() {
                events.add("ready");
            }

            @Override
            public void transportInUse(boolean inUse) {
            }
        }));
        assertTrue(terminated.await(30, TimeUnit.SECONDS), "gRPC heard: " + events);
        assertEquals(List.of("shutdown INTERNAL", "terminated"), events);
    }

    @Test
    void theLastStreamEndingWhileGrpcHearsOfTheShutdownTerminatesTheTransportAfterIt() throws Exception {
        ConnectionClientTransport transport = newTransport();
        Listener listener = new Listener();
        assertEquals(null, transport.start(listener));
        assertTrue(listener.ready.await(30, TimeUnit.SECONDS), "the transport's ping was answered");
        ClientStream stream = newUnaryStream(transport);
        stream.start(ignoring()); // a unary stream: nothing is sent before its message
        Thread shuttingDown = new Thread(() -> transport.shutdown(Status.UNAVAILABLE.withDescription("test")));
        shuttingDown.setDaemon(true);
        shuttingDown.start();
        try {
            assertTrue(listener.inShutdown.await(30, TimeUnit.SECONDS));
            stream.cancel(Status.CANCELLED); // the last stream ends while grpc-java hears of the shutdown
        } finally {
            listener.releaseShutdown.countDown();
        }
        shuttingDown.join(30_000);
        assertTrue(listener.terminated.await(30, TimeUnit.SECONDS), "terminated: " + listener.events);
        assertEquals(List.of("shutdown begins", "shutdown ends", "terminated"), listener.events);
    }
}
