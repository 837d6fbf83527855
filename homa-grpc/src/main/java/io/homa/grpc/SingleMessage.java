package io.homa.grpc;

import io.grpc.internal.StreamListener;

import java.io.InputStream;

/** Hands one message to a gRPC stream listener. */
final class SingleMessage implements StreamListener.MessageProducer {
    private InputStream message;

    SingleMessage(InputStream message) {
        this.message = message;
    }

    @Override
    public InputStream next() {
        InputStream m = message;
        message = null;
        return m;
    }
}
