package io.homa.grpc;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientStreamTracer;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.homa.HomaConfig;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.homa.grpc.TestService.request;
import static org.junit.jupiter.api.Assertions.*;

/**
 * gRPC over Homa under overload (issue 25): a call the Homa server refused before the application
 * saw it is a refused stream, which gRPC retries transparently; a call whose deadline passes while
 * its OPEN waits in the Homa server's queue never reaches the application. The server's Homa
 * handler threads are held back on purpose by an executor the test opens and closes.
 */
class OverloadTest {
    /** Runs tasks on a pool, or holds them while closed (the Homa server's handler executor). */
    private static final class Gate implements java.util.concurrent.Executor {
        private final ExecutorService pool = Executors.newFixedThreadPool(2);
        private final List<Runnable> held = new ArrayList<>();
        private boolean closed;
        /** When the first task was held (System.nanoTime()). */
        private long firstHeldAt;

        @Override
        public synchronized void execute(Runnable task) {
            if (closed) {
                if (held.isEmpty()) {
                    firstHeldAt = System.nanoTime();
                }
                held.add(task);
            } else {
                pool.execute(task);
            }
        }

        synchronized void close() {
            closed = true;
        }

        /**
         * Opens once {@code nanos} have passed since the first task was held. The server hands its
         * executor a request's task after it has read the request, so a deadline the request
         * carried with {@code nanos} left has passed on the server's clock by then.
         */
        void openOnceHeldFor(long nanos) {
            awaitTrue(() -> {
                synchronized (this) {
                    return !held.isEmpty() && System.nanoTime() - firstHeldAt >= nanos;
                }
            }, "the request never reached the server's executor");
            open();
        }

        synchronized void open() {
            closed = false;
            held.forEach(pool::execute);
            held.clear();
        }

        void shutdown() {
            open();
            pool.shutdown();
        }
    }

    /** Counts the calls that reach the application. */
    private static final class Arrivals implements ServerInterceptor {
        final AtomicInteger calls = new AtomicInteger();

        @Override
        public <Q, R> io.grpc.ServerCall.Listener<Q> interceptCall(io.grpc.ServerCall<Q, R> call, Metadata headers,
                                                                    io.grpc.ServerCallHandler<Q, R> next) {
            calls.incrementAndGet();
            return next.startCall(call, headers);
        }
    }

    /** Counts the attempts of each call, and which of them were gRPC's transparent retries. */
    private static final class Attempts implements ClientInterceptor {
        final AtomicInteger attempts = new AtomicInteger();
        final AtomicInteger transparentRetries = new AtomicInteger();

        @Override
        public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            return next.newCall(method, options.withStreamTracerFactory(new ClientStreamTracer.Factory() {
                @Override
                public ClientStreamTracer newClientStreamTracer(ClientStreamTracer.StreamInfo info, Metadata headers) {
                    attempts.incrementAndGet();
                    if (info.isTransparentRetry()) {
                        transparentRetries.incrementAndGet();
                    }
                    return new ClientStreamTracer() { };
                }
            }));
        }
    }

    @Test
    void aCallRefusedUnrun_isARefusedStream_thatGrpcRetriesTransparently() throws Exception {
        Gate gate = new Gate();
        Arrivals arrivals = new Arrivals();
        Attempts attempts = new Attempts();
        HomaConfig server = Transport.loopbackBuilder().executor(gate).maxQueuedRequests(1).build();
        try (Transport.Pair p = Transport.HOMA.start(ServerInterceptors.intercept(TestService.definition(), arrivals),
                4 << 20, server, Transport.loopback())) {
            var stub = SimpleServiceGrpc.newBlockingStub(p.channel()).withInterceptors(attempts)
                    .withDeadlineAfter(20, TimeUnit.SECONDS);
            assertEquals("warm", stub.unaryRpc(request("warm")).getResponseMessage()); // connected
            gate.close();
            // The first call's OPEN takes the one place in the queue and waits there...
            var first = SimpleServiceGrpc.newFutureStub(p.channel()).withDeadlineAfter(20, TimeUnit.SECONDS)
                    .unaryRpc(request("first"));
            awaitHeld(gate);
            // ...so the second's is refused unrun (OVERLOADED), and so is gRPC's transparent retry.
            attempts.attempts.set(0);
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> stub.unaryRpc(request("second")));
            assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.getStatus().toString());
            assertTrue(e.getStatus().getDescription().contains("refused the call unrun"), e.getStatus().toString());
            assertTrue(attempts.transparentRetries.get() >= 1, "gRPC retried the refused stream transparently: "
                    + attempts.attempts + " attempts");
            gate.open();
            assertEquals("first", first.get(20, TimeUnit.SECONDS).getResponseMessage());
            assertEquals(2, arrivals.calls.get(), "only warm and first reached the application");
        } finally {
            gate.shutdown();
        }
    }

    @Test
    void aCallWhoseDeadlinePassedInTheHomaQueue_neverReachesTheApplication() throws Exception {
        Gate gate = new Gate();
        Arrivals arrivals = new Arrivals();
        // The server builder's own default keeps requests for a day: the caller's deadline, which
        // travels with the OPEN frame's Homa request, is what sheds it.
        HomaConfig server = Transport.loopbackBuilder().executor(gate).requestTimeout(java.time.Duration.ofDays(1)).build();
        try (Transport.Pair p = Transport.HOMA.start(ServerInterceptors.intercept(TestService.definition(), arrivals),
                4 << 20, server, Transport.loopback())) {
            var stub = SimpleServiceGrpc.newBlockingStub(p.channel());
            assertEquals("warm", stub.withDeadlineAfter(20, TimeUnit.SECONDS).unaryRpc(request("warm")).getResponseMessage());
            gate.close();
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                    () -> stub.withDeadlineAfter(300, TimeUnit.MILLISECONDS).unaryRpc(request("late")));
            assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode(), e.getStatus().toString());
            // The client gives up at its deadline; the server's estimate of it (when it read the
            // request plus the time left) can be later by the time the request waited in its
            // socket, more than the server's guard on a loaded machine. So the test lets the
            // handler thread go only when that estimate has passed too: that is the property.
            gate.openOnceHeldFor(TimeUnit.MILLISECONDS.toNanos(300));
            // A later call is served: so the queue has been worked through, the late one with it.
            assertEquals("after", stub.withDeadlineAfter(20, TimeUnit.SECONDS).unaryRpc(request("after")).getResponseMessage());
            assertEquals(2, arrivals.calls.get(), "the late call reached the application");
        } finally {
            gate.shutdown();
        }
    }

    private static void awaitHeld(Gate gate) {
        awaitTrue(() -> {
            synchronized (gate) {
                return !gate.held.isEmpty();
            }
        }, "the OPEN never reached the server's queue");
    }

    /** Polls {@code condition} until it holds; fails with {@code never} after 20 s. */
    private static void awaitTrue(java.util.function.BooleanSupplier condition, String never) {
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < giveUp, never);
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // polls a condition
        }
    }
}
