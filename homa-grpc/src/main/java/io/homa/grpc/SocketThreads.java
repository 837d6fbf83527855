package io.homa.grpc;

import io.homa.HomaConfig;

/**
 * Where the Homa socket under a gRPC channel or server runs its part of a call: on its event loop
 * ({@link HomaConfig#inlineExecution()}), one thread hand-off less, wherever the code that runs
 * there is the transport's own or code grpc-java's contract forbids to block. A configuration that
 * names an executor of its own, or asks for inline execution, is used as given.
 */
final class SocketThreads {
    private SocketThreads() {
    }

    /**
     * A channel's socket runs inline: with grpc-java's executor its part is decoding the server's
     * answer and queueing the callback onto that executor; with {@code directExecutor()} it runs
     * the application's callbacks, which grpc-java then runs on the transport's thread (as
     * grpc-netty does on its event loop) and which must not block. A blocking stub's callbacks go
     * to the calling thread's own queue either way.
     */
    static HomaConfig forChannel(HomaConfig config) {
        return inline(config);
    }

    /**
     * A server's socket runs inline with grpc-java's executor (its part is decoding a frame and
     * queueing the call onto that executor, which never blocks). Under {@code directExecutor()}
     * the service's methods run on the socket's thread and may block (HomaServerBuilder says so),
     * so the socket keeps its handler executor unless the configuration asks for inline execution.
     */
    static HomaConfig forServer(HomaConfig config, boolean directExecutor) {
        return directExecutor ? config : inline(config);
    }

    private static HomaConfig inline(HomaConfig config) {
        if (config.executor() != null || config.inlineExecution()) {
            return config;
        }
        return config.toBuilder().inlineExecution(true).build();
    }
}
