package io.homa.grpc;

import io.grpc.Drainable;
import io.grpc.KnownLength;
import io.grpc.Status;
import io.grpc.internal.ReadableBuffers;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;

import java.io.IOException;
import java.io.InputStream;

/**
 * gRPC messages to and from Netty buffers, with one copy out and none in. An outgoing message
 * is drained from the marshaller's stream straight into one pooled buffer (the only copy before
 * Homa's into its datagrams); an incoming one reaches the marshaller as a stream over the memory
 * Homa received it in.
 */
final class MessageBuffers {
    private MessageBuffers() {
    }

    /**
     * The message gRPC wrote, in a pooled buffer the caller owns; closes the stream. A stream that
     * knows its length ({@link KnownLength}, as the Protocol Buffers marshaller's does) gets a
     * buffer of exactly that size, and a {@link Drainable} one writes itself into it in one go.
     *
     * @throws io.grpc.StatusRuntimeException (INTERNAL) if the stream fails
     */
    static ByteBuf drain(InputStream message) {
        ByteBuf buf = null;
        try (InputStream in = message) {
            int known = in instanceof KnownLength ? in.available() : -1;
            buf = known >= 0 ? ByteBufAllocator.DEFAULT.buffer(known, known) : ByteBufAllocator.DEFAULT.buffer();
            if (in instanceof Drainable drainable) {
                try (ByteBufOutputStream out = new ByteBufOutputStream(buf)) {
                    drainable.drainTo(out);
                }
            } else if (known >= 0) {
                buf.writeBytes(in, known);
            } else {
                while (buf.writeBytes(in, 8192) > 0) {
                    // writeBytes grows the buffer as it needs to
                }
            }
            return buf;
        } catch (IOException | RuntimeException e) {
            if (buf != null) {
                buf.release();
            }
            throw Status.INTERNAL.withDescription("could not read a message to send").withCause(e).asRuntimeException();
        }
    }

    /**
     * A stream over a received message that takes over one reference to {@code buf}: it is
     * {@code KnownLength}, {@code HasByteBuffer} and {@code Detachable}, and closing it releases
     * the buffer.
     */
    static InputStream stream(ByteBuf buf) {
        return ReadableBuffers.openStream(new ByteBufReadableBuffer(buf), true);
    }
}
