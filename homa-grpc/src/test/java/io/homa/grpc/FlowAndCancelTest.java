package io.homa.grpc;

import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.homa.grpc.TestService.ofLength;
import static io.homa.grpc.TestService.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Flow control by request(n), cancellation seen by the server, and a server that is gone. */
class FlowAndCancelTest {
    /**
     * A bidi method that records whether it could send at once, then (if {@code sends}) sends
     * three messages as the client allows.
     */
    private static final class Sender {
        final CompletableFuture<Boolean> readyAtStart = new CompletableFuture<>();
        final CompletableFuture<Status> cancelled = new CompletableFuture<>();
        final boolean sends;

        Sender(boolean sends) {
            this.sends = sends;
        }

        ServerServiceDefinition service() {
            return ServerServiceDefinition.builder(SimpleServiceGrpc.SERVICE_NAME)
                    .addMethod(SimpleServiceGrpc.getBidiStreamingRpcMethod(), ServerCalls.asyncBidiStreamingCall(this::call))
                    .build();
        }

        private StreamObserver<SimpleRequest> call(StreamObserver<SimpleResponse> responses) {
            ServerCallStreamObserver<SimpleResponse> out = (ServerCallStreamObserver<SimpleResponse>) responses;
            readyAtStart.complete(out.isReady());
            out.setOnCancelHandler(() -> cancelled.complete(Status.CANCELLED));
            int[] sent = {sends ? 0 : 4};
            out.setOnReadyHandler(() -> {
                while (out.isReady() && sent[0] < 3) {
                    out.onNext(ofLength(10 + sent[0]++));
                }
                if (sent[0] == 3) {
                    sent[0]++;
                    out.onCompleted();
                }
            });
            return new StreamObserver<>() {
                @Override public void onNext(SimpleRequest value) { }
                @Override public void onError(Throwable t) { }
                @Override public void onCompleted() { }
            };
        }
    }

    /** The client asks for nothing at first, then for three messages. */
    private static final class ManualReader extends Recorder<SimpleResponse>
            implements ClientResponseObserver<SimpleRequest, SimpleResponse> {
        volatile ClientCallStreamObserver<SimpleRequest> requests;

        @Override
        public void beforeStart(ClientCallStreamObserver<SimpleRequest> requestStream) {
            requests = requestStream;
            requestStream.disableAutoRequestWithInitial(0);
        }
    }

    @Test
    void aReaderThatAsksForNothingHoldsTheWriterBack() throws Exception {
        Sender sender = new Sender(true);
        try (Transport.Pair p = Transport.HOMA.start(sender.service(), 4 << 20)) {
            ManualReader reader = new ManualReader();
            SimpleServiceGrpc.newStub(p.channel()).withDeadlineAfter(30, TimeUnit.SECONDS).bidiStreamingRpc(reader);
            assertFalse(sender.readyAtStart.get(30, TimeUnit.SECONDS), "no credit yet, so the server may not send");
            reader.requests.request(3);
            reader.requests.onCompleted();
            reader.assertOk();
            assertEquals(List.of(ofLength(10), ofLength(11), ofLength(12)), reader.values);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void theServerLearnsThatTheClientCancelled(Transport t) throws Exception {
        Sender sender = new Sender(false);
        try (Transport.Pair p = t.start(sender.service(), 4 << 20)) {
            ManualReader reader = new ManualReader();
            SimpleServiceGrpc.newStub(p.channel()).withDeadlineAfter(30, TimeUnit.SECONDS).bidiStreamingRpc(reader);
            sender.readyAtStart.get(30, TimeUnit.SECONDS);
            reader.requests.cancel("the test cancels", null);
            assertEquals(Status.Code.CANCELLED, reader.awaitEnd().getCode());
            assertEquals(Status.CANCELLED, sender.cancelled.get(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void callsToAServerThatIsGoneFailWithUnavailable() throws Exception {
        int port;
        try (Transport.Pair p = Transport.HOMA.start(TestService.definition(), 4 << 20)) {
            port = p.server().getPort();
        }
        io.grpc.ManagedChannel channel = HomaChannelBuilder.forAddress(Transport.HOST, port)
                .homaConfig(Transport.loopbackBuilder().timeoutTicks(100).build()).build();
        try {
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> SimpleServiceGrpc
                    .newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS).unaryRpc(request("anyone?")));
            assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.getStatus().toString());
        } finally {
            channel.shutdownNow();
            channel.awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void buildersRejectBadArguments() {
        assertThrows(io.homa.HomaBadArgumentException.class, () -> HomaServerBuilder.forPort(70_000));
        assertThrows(io.homa.HomaBadArgumentException.class,
                () -> HomaServerBuilder.forAddress(InetSocketAddress.createUnresolved("nowhere", 1)));
        assertThrows(io.homa.HomaBadArgumentException.class, () -> HomaChannelBuilder.forAddress(null, 1));
        assertThrows(io.homa.HomaBadArgumentException.class, () -> HomaChannelBuilder.forTarget("x").homaConfig(null));
        assertThrows(io.homa.HomaBadArgumentException.class, () -> HomaChannelBuilder.forTarget("x").maxInboundMessageSize(-1));
    }
}
