package io.homa.grpc.examples;

import io.grpc.*;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.*;
import io.homa.grpc.*;

public class HelloGrpc {
    public static void main(String[] args) throws Exception {
        Server server = HomaServerBuilder.forPort(0).addService(new SimpleServiceGrpc.SimpleServiceImplBase() {
            @Override public void unaryRpc(SimpleRequest request, StreamObserver<SimpleResponse> out) {
                out.onNext(SimpleResponse.newBuilder().setResponseMessage("hello, " + request.getRequestMessage()).build());
                out.onCompleted();
            }
        }).build().start();
        ManagedChannel channel = HomaChannelBuilder.forAddress("127.0.0.1", server.getPort()).build();
        SimpleRequest request = SimpleRequest.newBuilder().setRequestMessage("Homa").build();
        System.out.println(SimpleServiceGrpc.newBlockingStub(channel).unaryRpc(request).getResponseMessage());
        channel.shutdown().awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS);
        server.shutdown().awaitTermination();
    }
}
