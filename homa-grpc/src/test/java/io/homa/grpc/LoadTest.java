package io.homa.grpc;

import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.grpc.testing.protobuf.SimpleRequest;
import io.grpc.testing.protobuf.SimpleResponse;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.homa.grpc.TestService.ofLength;
import static io.homa.grpc.TestService.request;
import static io.homa.grpc.TestService.response;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Many calls at once, the largest messages, and a network that loses datagrams. */
class LoadTest {
    private static final int SIXTEEN_MIB = 16 << 20;

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aThousandConcurrentUnaryCalls(Transport t) throws Exception {
        try (Transport.Pair p = t.start(TestService.definition(), 4 << 20)) {
            SimpleServiceGrpc.SimpleServiceFutureStub stub = SimpleServiceGrpc.newFutureStub(p.channel())
                    .withDeadlineAfter(60, TimeUnit.SECONDS);
            List<ListenableFuture<SimpleResponse>> calls = new ArrayList<>();
            for (int i = 0; i < 1_000; i++) {
                calls.add(stub.unaryRpc(request("call " + i)));
            }
            for (int i = 0; i < calls.size(); i++) {
                assertEquals(response("call " + i), calls.get(i).get(60, TimeUnit.SECONDS));
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void sixteenMebibyteMessages(Transport t) throws Exception {
        // The message is a protobuf string of 16 MiB less its few bytes of encoding.
        String big = "m".repeat(SIXTEEN_MIB - 8);
        try (Transport.Pair p = t.start(TestService.definition(), SIXTEEN_MIB)) {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = SimpleServiceGrpc.newBlockingStub(p.channel())
                    .withDeadlineAfter(60, TimeUnit.SECONDS);
            assertEquals(big, stub.unaryRpc(request(big)).getResponseMessage());
            Iterator<SimpleResponse> it = stub.serverStreamingRpc(request((SIXTEEN_MIB - 8) + ",1"));
            assertEquals(SIXTEEN_MIB - 8, it.next().getResponseMessage().length());
            assertEquals(1, it.next().getResponseMessage().length());
            // One byte over the limit: the receiver refuses it.
            StatusRuntimeException e = org.junit.jupiter.api.Assertions.assertThrows(StatusRuntimeException.class,
                    () -> stub.unaryRpc(request(big + "0123456789")));
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode(), e.getStatus().toString());
        }
    }

    @Test
    void underFivePercentLossEveryCallIsCorrectOrFailsWithAProperStatus() throws Exception {
        Set<Status.Code> proper = Set.of(Status.Code.UNAVAILABLE, Status.Code.DEADLINE_EXCEEDED);
        try (Transport.Pair p = Transport.HOMA.start(TestService.definition(), 4 << 20,
                LossyHoma.dropping(0.05, 1), LossyHoma.dropping(0.05, 2))) {
            SimpleServiceGrpc.SimpleServiceFutureStub futures = SimpleServiceGrpc.newFutureStub(p.channel())
                    .withDeadlineAfter(30, TimeUnit.SECONDS);
            List<ListenableFuture<SimpleResponse>> unary = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                unary.add(futures.unaryRpc(request(i + ":" + "p".repeat(i * 500))));
            }
            List<Recorder<SimpleResponse>> streams = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                Recorder<SimpleResponse> r = new Recorder<>();
                StreamObserver<SimpleRequest> requests = SimpleServiceGrpc.newStub(p.channel())
                        .withDeadlineAfter(30, TimeUnit.SECONDS).bidiStreamingRpc(r);
                for (int n : new int[] {100, 70_000, 3}) {
                    requests.onNext(request(Integer.toString(n)));
                }
                requests.onCompleted();
                streams.add(r);
            }
            int ok = 0;
            for (int i = 0; i < unary.size(); i++) {
                try {
                    assertEquals(response(i + ":" + "p".repeat(i * 500)), unary.get(i).get(60, TimeUnit.SECONDS));
                    ok++;
                } catch (ExecutionException e) {
                    Status s = Status.fromThrowable(e.getCause());
                    assertTrue(proper.contains(s.getCode()), "call " + i + " failed with " + s);
                }
            }
            for (Recorder<SimpleResponse> r : streams) {
                Status s = r.awaitEnd();
                if (s.isOk()) {
                    assertEquals(List.of(ofLength(100), ofLength(70_000), ofLength(3)), r.values);
                    ok++;
                } else {
                    assertTrue(proper.contains(s.getCode()), "a stream failed with " + s);
                }
            }
            assertTrue(ok > 0, "some calls got through a 5% loss");
        }
    }
}
