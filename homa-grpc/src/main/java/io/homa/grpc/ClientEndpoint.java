package io.homa.grpc;

import io.homa.HomaConfig;
import io.homa.HomaRequest;
import io.homa.HomaSocket;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A channel's Homa socket: it sends every frame of the channel's calls, to any number of servers,
 * and serves the frames servers send back (HEADERS, MESSAGE, CLOSE, CANCEL, CREDIT of streaming
 * calls), handing each to its stream by stream id. Stream ids start at a random number, so that
 * a restarted client does not pick up the frames of its former life.
 */
final class ClientEndpoint {
    private final HomaSocket socket;
    private final ConcurrentHashMap<Long, HomaClientStream> streams = new ConcurrentHashMap<>();
    private final AtomicLong nextId = new AtomicLong(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE);

    ClientEndpoint(HomaConfig config) {
        socket = HomaSocket.open(config);
        socket.serve(this::handle);
    }

    HomaSocket socket() {
        return socket;
    }

    long newStreamId() {
        return nextId.getAndIncrement();
    }

    void add(HomaClientStream stream) {
        streams.put(stream.id, stream);
    }

    void remove(HomaClientStream stream) {
        streams.remove(stream.id, stream);
    }

    /** Runs on the socket's executor for each frame a server sent. */
    private void handle(HomaRequest request) {
        Frame f = Frame.read(request);
        if (f == null) {
            return;
        }
        try {
            HomaClientStream stream = streams.get(f.streamId);
            request.reply(Frame.Reply.of(stream == null ? Frame.Reply.UNKNOWN_STREAM : stream.onFrame(f)));
        } finally {
            f.release(); // a message nobody took
        }
    }

    void close() {
        socket.close();
    }
}
