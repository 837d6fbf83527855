package io.homa.grpc;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.homa.HomaConfig;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which thread runs a unary call's service method and the client's callback, for each executor
 * choice (docs/grpc.md counts the hand-offs): the socket's event loop threads are
 * {@code homa-io-*}, its handler executor's {@code homa-exec-*}, grpc-java's default executor's
 * {@code grpc-default-executor-*}.
 */
class HandOffTest {
    /** The threads of one call: the service method's, the client callback's, and the caller's own. */
    private record Threads(String service, String callback, String caller) {
    }

    private static Threads oneCall(HomaServerBuilder serverBuilder, boolean directChannel, HomaConfig clientConfig)
            throws Exception {
        CompletableFuture<String> service = new CompletableFuture<>();
        ServerServiceDefinition definition = ServerServiceDefinition.builder(SimpleServiceGrpc.SERVICE_NAME)
                .addMethod(SimpleServiceGrpc.getUnaryRpcMethod(),
                        ServerCalls.asyncUnaryCall((SimpleRequest r, StreamObserver<SimpleResponse> reply) -> {
                            service.complete(Thread.currentThread().getName());
                            reply.onNext(SimpleResponse.newBuilder().setResponseMessage(r.getRequestMessage()).build());
                            reply.onCompleted();
                        }))
                .build();
        Server server = serverBuilder.addService(definition).build().start();
        HomaChannelBuilder cb = HomaChannelBuilder.forAddress(Transport.HOST, server.getPort())
                .homaConfig(clientConfig.toBuilder().bindAddress(new InetSocketAddress(Transport.HOST, 0)).build());
        ManagedChannel channel = (directChannel ? cb.directExecutor() : cb).build();
        try {
            CompletableFuture<String> callback = new CompletableFuture<>();
            SimpleServiceGrpc.newStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS).unaryRpc(
                    SimpleRequest.newBuilder().setRequestMessage("hi").build(), new StreamObserver<>() {
                        @Override
                        public void onNext(SimpleResponse value) {
                            callback.complete(Thread.currentThread().getName());
                        }

                        @Override
                        public void onError(Throwable t) {
                            callback.completeExceptionally(t);
                        }

                        @Override
                        public void onCompleted() {
                        }
                    });
            return new Threads(service.get(30, TimeUnit.SECONDS), callback.get(30, TimeUnit.SECONDS),
                    Thread.currentThread().getName());
        } finally {
            channel.shutdownNow();
            server.shutdownNow();
            assertTrue(channel.awaitTermination(10, TimeUnit.SECONDS));
            assertTrue(server.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    /** The handler executors' threads alive now (they start with their first task). */
    private static Set<Thread> handlerThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("homa-exec-"))
                .collect(Collectors.toCollection(HashSet::new));
    }

    private static HomaServerBuilder server() {
        return HomaServerBuilder.forAddress(new InetSocketAddress(Transport.HOST, 0));
    }

    private static void assertOn(String prefix, String thread, String what) {
        assertTrue(thread.startsWith(prefix), what + " ran on " + thread + ", expected " + prefix + "*");
    }

    /**
     * A channel's callback on its socket's event loop; or, rarely, on the calling thread, when the
     * answer arrives while that thread is still sending on the stream and finds the callback due
     * (a caller's turn: docs/grpc.md, "On the client"). Never on a handler executor or grpc-java's.
     */
    private static void assertOnLoopOrCaller(Threads t) {
        assertTrue(t.callback().startsWith("homa-io-") || t.callback().equals(t.caller()),
                "the client callback ran on " + t.callback() + ", expected homa-io-* or the caller, " + t.caller());
    }

    @Test
    void defaultExecutorsTakeTheFrameStraightFromTheEventLoop() throws Exception {
        Set<Thread> handlerThreadsBefore = handlerThreads();
        Threads t = oneCall(server(), false, Transport.loopback());
        assertOn("grpc-default-executor", t.service(), "the service method");
        assertOn("grpc-default-executor", t.callback(), "the client callback");
        Set<Thread> started = handlerThreads();
        started.removeAll(handlerThreadsBefore);
        assertEquals(Set.of(), started, "no socket's handler executor took part");
    }

    @Test
    void directExecutorsRunTheServiceOnTheHandlerExecutorAndTheCallbackOnTheEventLoop() throws Exception {
        Threads t = oneCall(server().directExecutor(), true, Transport.loopback());
        assertOn("homa-exec-", t.service(), "the service method (it may block there)");
        assertOnLoopOrCaller(t); // grpc-java's transport thread, as grpc-netty's
    }

    @Test
    void aChannelConfigurationThatNamesAnExecutorRunsTheCallbackThere() throws Exception {
        java.util.concurrent.ExecutorService mine = java.util.concurrent.Executors.newSingleThreadExecutor(
                r -> new Thread(r, "mine-callbacks"));
        try {
            Threads t = oneCall(server().directExecutor(), true, Transport.loopback().toBuilder().executor(mine).build());
            assertOn("mine-callbacks", t.callback(), "the client callback");
        } finally {
            mine.shutdownNow();
        }
    }

    @Test
    void inlineExecutionRunsANonBlockingServiceAndCallbackOnTheEventLoops() throws Exception {
        HomaConfig inline = HomaConfig.builder().inlineExecution(true).build();
        Threads t = oneCall(server().directExecutor().homaConfig(inline), true, inline);
        assertOn("homa-io-", t.service(), "the service method");
        assertOnLoopOrCaller(t);
    }
}
