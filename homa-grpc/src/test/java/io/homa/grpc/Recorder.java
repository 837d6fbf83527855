package io.homa.grpc;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;

import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

/** Records what a call's responses were and how it ended. */
class Recorder<T> implements StreamObserver<T> {
    static final long TIMEOUT_SECONDS = 30;

    final List<T> values = new CopyOnWriteArrayList<>();
    final BlockingQueue<T> queue = new LinkedBlockingQueue<>();
    /** Completes with OK or the call's failure status. */
    final CompletableFuture<Status> end = new CompletableFuture<>();

    @Override
    public void onNext(T value) {
        values.add(value);
        queue.add(value);
    }

    @Override
    public void onError(Throwable t) {
        end.complete(Status.fromThrowable(t));
    }

    @Override
    public void onCompleted() {
        end.complete(Status.OK);
    }

    Status awaitEnd() throws Exception {
        return end.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }

    T next() throws InterruptedException {
        T v = queue.poll(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        assertNotNull(v, "no response within " + TIMEOUT_SECONDS + " s");
        return v;
    }

    void assertOk() throws Exception {
        Status s = awaitEnd();
        if (!s.isOk()) {
            fail("the call failed: " + s, s.getCause());
        }
    }
}
