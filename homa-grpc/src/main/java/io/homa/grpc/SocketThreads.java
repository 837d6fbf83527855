package io.homa.grpc;

import io.homa.HomaConfig;

/**
 * Where the Homa socket under a gRPC channel or server runs its part of a call. When grpc-java's
 * own executor runs the application's code (its default), the socket's part is only decoding a
 * frame and queueing the call onto that executor, which never blocks: it runs on the event loop
 * itself ({@link HomaConfig#inlineExecution()}), and the call costs one thread hand-off less than
 * through the socket's handler executor. Under {@code directExecutor()} the application's code runs
 * on the socket's thread, so the socket keeps its handler executor (where code may block) unless
 * the configuration asks for inline execution. A configuration that names an executor of its own
 * is used as given.
 */
final class SocketThreads {
    private SocketThreads() {
    }

    static HomaConfig forGrpcExecutor(HomaConfig config, boolean directExecutor) {
        if (directExecutor || config.executor() != null || config.inlineExecution()) {
            return config;
        }
        return config.toBuilder().inlineExecution(true).build();
    }
}
