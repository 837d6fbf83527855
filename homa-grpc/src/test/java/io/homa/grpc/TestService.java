package io.homa.grpc;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;

/**
 * The interop test server's behaviour on grpc-testing-proto's SimpleService (whose messages carry
 * one string): unary echoes, or fails with "status:CODE:MESSAGE", or never answers "sleep";
 * client streaming answers the total length; server streaming answers one message per length in
 * "N,N,..."; bidi answers each "N" with N bytes (and never answers "sleep"). Echoes the two
 * custom metadata keys of the interop spec.
 */
final class TestService extends SimpleServiceGrpc.SimpleServiceImplBase {
    static final Metadata.Key<String> ECHO_INITIAL = Metadata.Key.of("x-grpc-test-echo-initial", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<byte[]> ECHO_TRAILING = Metadata.Key.of("x-grpc-test-echo-trailing-bin", Metadata.BINARY_BYTE_MARSHALLER);

    static ServerServiceDefinition definition() {
        return ServerInterceptors.intercept(new TestService(), new EchoMetadata());
    }

    static SimpleRequest request(String message) {
        return SimpleRequest.newBuilder().setRequestMessage(message).build();
    }

    static SimpleResponse response(String message) {
        return SimpleResponse.newBuilder().setResponseMessage(message).build();
    }

    static SimpleResponse ofLength(int n) {
        return response("x".repeat(n));
    }

    @Override
    public void unaryRpc(SimpleRequest request, StreamObserver<SimpleResponse> out) {
        String m = request.getRequestMessage();
        if (m.equals("sleep")) {
            return; // until the client's deadline or cancellation
        }
        if (m.startsWith("status:")) {
            out.onError(statusOf(m).asRuntimeException());
            return;
        }
        out.onNext(response(m));
        out.onCompleted();
    }

    @Override
    public StreamObserver<SimpleRequest> clientStreamingRpc(StreamObserver<SimpleResponse> out) {
        return new StreamObserver<>() {
            long total;

            @Override
            public void onNext(SimpleRequest r) {
                total += r.getRequestMessage().length();
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
                out.onNext(response(Long.toString(total)));
                out.onCompleted();
            }
        };
    }

    @Override
    public void serverStreamingRpc(SimpleRequest request, StreamObserver<SimpleResponse> out) {
        for (String n : request.getRequestMessage().split(",")) {
            out.onNext(ofLength(Integer.parseInt(n)));
        }
        out.onCompleted();
    }

    @Override
    public StreamObserver<SimpleRequest> bidiStreamingRpc(StreamObserver<SimpleResponse> out) {
        return new StreamObserver<>() {
            @Override
            public void onNext(SimpleRequest r) {
                String m = r.getRequestMessage();
                if (m.startsWith("status:")) {
                    out.onError(statusOf(m).asRuntimeException());
                } else if (!m.equals("sleep")) {
                    out.onNext(ofLength(Integer.parseInt(m)));
                }
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
                out.onCompleted();
            }
        };
    }

    private static Status statusOf(String m) {
        int colon = m.indexOf(':', "status:".length());
        return Status.fromCodeValue(Integer.parseInt(m.substring("status:".length(), colon)))
                .withDescription(m.substring(colon + 1));
    }

    /** Sends back the interop spec's echo headers: the initial one in headers, the binary one in trailers. */
    private static final class EchoMetadata implements ServerInterceptor {
        @Override
        public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
            String initial = headers.get(ECHO_INITIAL);
            byte[] trailing = headers.get(ECHO_TRAILING);
            return next.startCall(new SimpleForwardingServerCall<>(call) {
                @Override
                public void sendHeaders(Metadata h) {
                    if (initial != null) {
                        h.put(ECHO_INITIAL, initial);
                    }
                    super.sendHeaders(h);
                }

                @Override
                public void close(Status status, Metadata trailers) {
                    if (trailing != null) {
                        trailers.put(ECHO_TRAILING, trailing);
                    }
                    super.close(status, trailers);
                }
            }, headers);
        }
    }
}
