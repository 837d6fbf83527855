package io.homa.grpc;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static io.homa.grpc.TestService.ofLength;
import static io.homa.grpc.TestService.request;
import static io.homa.grpc.TestService.response;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * gRPC's interop test cases (grpc's doc/interop-test-descriptions.md), written against
 * grpc-testing-proto's SimpleService, each run over Homa and over grpc-netty.
 */
class InteropTest {
    private static final Map<Transport, Transport.Pair> PAIRS = new EnumMap<>(Transport.class);

    @BeforeAll
    static void start() throws IOException {
        for (Transport t : Transport.values()) {
            PAIRS.put(t, t.start(TestService.definition(), 4 << 20));
        }
    }

    @AfterAll
    static void stop() {
        for (Transport.Pair p : PAIRS.values()) {
            p.close();
        }
        PAIRS.clear();
    }

    private static SimpleServiceGrpc.SimpleServiceBlockingStub blocking(Transport t) {
        return SimpleServiceGrpc.newBlockingStub(PAIRS.get(t).channel()).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    private static SimpleServiceGrpc.SimpleServiceStub async(Transport t) {
        return SimpleServiceGrpc.newStub(PAIRS.get(t).channel()).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void emptyUnary(Transport t) {
        assertEquals(SimpleResponse.getDefaultInstance(), blocking(t).unaryRpc(SimpleRequest.getDefaultInstance()));
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void largeUnary(Transport t) {
        String payload = "y".repeat(271_828);
        assertEquals(response(payload), blocking(t).unaryRpc(request(payload)));
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void clientStreaming(Transport t) throws Exception {
        Recorder<SimpleResponse> responses = new Recorder<>();
        StreamObserver<SimpleRequest> requests = async(t).clientStreamingRpc(responses);
        for (int n : new int[] {27_182, 8, 1_828, 45_904}) {
            requests.onNext(request("z".repeat(n)));
        }
        requests.onCompleted();
        responses.assertOk();
        assertEquals(List.of(response("74922")), responses.values);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void serverStreaming(Transport t) {
        Iterator<SimpleResponse> it = blocking(t).serverStreamingRpc(request("31415,9,2653,58979"));
        List<Integer> lengths = new ArrayList<>();
        it.forEachRemaining(r -> lengths.add(r.getResponseMessage().length()));
        assertEquals(List.of(31_415, 9, 2_653, 58_979), lengths);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void pingPong(Transport t) throws Exception {
        Recorder<SimpleResponse> responses = new Recorder<>();
        StreamObserver<SimpleRequest> requests = async(t).bidiStreamingRpc(responses);
        for (int n : new int[] {31_415, 9, 2_653, 58_979}) {
            requests.onNext(request(Integer.toString(n)));
            assertEquals(ofLength(n), responses.next());
        }
        requests.onCompleted();
        responses.assertOk();
        assertEquals(4, responses.values.size());
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void emptyStream(Transport t) throws Exception {
        Recorder<SimpleResponse> responses = new Recorder<>();
        async(t).bidiStreamingRpc(responses).onCompleted();
        responses.assertOk();
        assertEquals(List.of(), responses.values);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void cancelAfterBegin(Transport t) throws Exception {
        Recorder<SimpleResponse> responses = new Recorder<>();
        ClientCallStreamObserver<SimpleRequest> requests =
                (ClientCallStreamObserver<SimpleRequest>) async(t).clientStreamingRpc(responses);
        requests.cancel("cancelled by the test", null);
        assertEquals(Status.Code.CANCELLED, responses.awaitEnd().getCode());
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void cancelAfterFirstResponse(Transport t) throws Exception {
        Recorder<SimpleResponse> responses = new Recorder<>();
        ClientCallStreamObserver<SimpleRequest> requests =
                (ClientCallStreamObserver<SimpleRequest>) async(t).bidiStreamingRpc(responses);
        requests.onNext(request("31415"));
        assertEquals(ofLength(31_415), responses.next());
        requests.cancel("cancelled by the test", null);
        assertEquals(Status.Code.CANCELLED, responses.awaitEnd().getCode());
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void timeoutOnSleepingServer(Transport t) throws Exception {
        Recorder<SimpleResponse> responses = new Recorder<>();
        StreamObserver<SimpleRequest> requests = SimpleServiceGrpc.newStub(PAIRS.get(t).channel())
                .withDeadlineAfter(1, TimeUnit.MILLISECONDS).bidiStreamingRpc(responses);
        try {
            requests.onNext(request("sleep"));
        } catch (IllegalStateException | StatusRuntimeException alreadyOver) {
            // the deadline may pass before the message is written; the status says so below
        }
        assertEquals(Status.Code.DEADLINE_EXCEEDED, responses.awaitEnd().getCode());
        // and a unary call to a handler that never answers
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () ->
                SimpleServiceGrpc.newBlockingStub(PAIRS.get(t).channel()).withDeadlineAfter(200, TimeUnit.MILLISECONDS)
                        .unaryRpc(request("sleep")));
        assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode());
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void statusCodeAndMessage(Transport t) throws Exception {
        assertStatus(t, 2, "test status message");
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void specialStatusMessage(Transport t) throws Exception {
        assertStatus(t, 2, "\t\ntest with whitespace\r\nand Unicode BMP \u263A and non-BMP \uD83D\uDE08\t\n");
    }

    /** The unary and the full-duplex call both end with the code and message the server chose. */
    private static void assertStatus(Transport t, int code, String message) throws Exception {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                () -> blocking(t).unaryRpc(request("status:" + code + ":" + message)));
        assertEquals(code, e.getStatus().getCode().value());
        assertEquals(message, e.getStatus().getDescription());

        Recorder<SimpleResponse> responses = new Recorder<>();
        StreamObserver<SimpleRequest> requests = async(t).bidiStreamingRpc(responses);
        requests.onNext(request("status:" + code + ":" + message));
        Status s = responses.awaitEnd();
        requests.onCompleted();
        assertEquals(code, s.getCode().value());
        assertEquals(message, s.getDescription());
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void customMetadata(Transport t) throws Exception {
        byte[] trailing = {(byte) 0xab, (byte) 0xab, (byte) 0xab};
        Metadata sent = new Metadata();
        sent.put(TestService.ECHO_INITIAL, "test_initial_metadata_value");
        sent.put(TestService.ECHO_TRAILING, trailing);
        // unary
        AtomicReference<Metadata> headers = new AtomicReference<>();
        AtomicReference<Metadata> trailers = new AtomicReference<>();
        SimpleServiceGrpc.SimpleServiceBlockingStub stub = blocking(t).withInterceptors(
                MetadataUtils.newAttachHeadersInterceptor(sent),
                MetadataUtils.newCaptureMetadataInterceptor(headers, trailers));
        String payload = "w".repeat(314_159);
        assertEquals(response(payload), stub.unaryRpc(request(payload)));
        assertEquals("test_initial_metadata_value", headers.get().get(TestService.ECHO_INITIAL));
        assertArrayEquals(trailing, trailers.get().get(TestService.ECHO_TRAILING));
        // full duplex
        headers.set(null);
        trailers.set(null);
        Recorder<SimpleResponse> responses = new Recorder<>();
        StreamObserver<SimpleRequest> requests = async(t).withInterceptors(
                MetadataUtils.newAttachHeadersInterceptor(sent),
                MetadataUtils.newCaptureMetadataInterceptor(headers, trailers)).bidiStreamingRpc(responses);
        requests.onNext(request("314159"));
        requests.onCompleted();
        responses.assertOk();
        assertEquals(List.of(ofLength(314_159)), responses.values);
        assertEquals("test_initial_metadata_value", headers.get().get(TestService.ECHO_INITIAL));
        assertArrayEquals(trailing, trailers.get().get(TestService.ECHO_TRAILING));
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void unimplementedMethod(Transport t) {
        assertUnimplemented(t, SimpleServiceGrpc.SERVICE_NAME + "/UnimplementedCall");
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void unimplementedService(Transport t) {
        assertUnimplemented(t, "grpc.testing.UnimplementedService/UnimplementedCall");
    }

    private static void assertUnimplemented(Transport t, String fullName) {
        MethodDescriptor<byte[], byte[]> method = MethodDescriptor.<byte[], byte[]>newBuilder()
                .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName(fullName)
                .setRequestMarshaller(Bytes.MARSHALLER).setResponseMarshaller(Bytes.MARSHALLER).build();
        ClientCall<byte[], byte[]> call = PAIRS.get(t).channel().newCall(method,
                CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS));
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                () -> ClientCalls.blockingUnaryCall(call, new byte[0]));
        assertEquals(Status.Code.UNIMPLEMENTED, e.getStatus().getCode());
    }

    /** Raw bytes as gRPC messages. */
    static final class Bytes implements MethodDescriptor.Marshaller<byte[]> {
        static final Bytes MARSHALLER = new Bytes();

        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try (stream) {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
