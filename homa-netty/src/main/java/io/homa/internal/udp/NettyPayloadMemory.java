package io.homa.internal.udp;

import io.homa.core.PayloadBuffer;
import io.homa.core.PayloadMemory;
import io.homa.core.ReceivedMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;

import java.nio.ByteBuffer;

/**
 * The engine's received payload memory in the Netty shell: a message that arrives in one datagram
 * is a retained slice of that datagram's buffer (no copy; a small one is copied rather than pin a
 * large read buffer, see {@link #keep}); a longer one is assembled in chunks of
 * pooled direct memory (one copy). {@link #toByteBuf} then hands a delivered message to user code
 * as one {@code ByteBuf} over those same buffers. Confined to one event loop, except
 * {@code toByteBuf}, which any thread may call.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class NettyPayloadMemory implements PayloadMemory {
    /** Messages shorter than this are copied when a slice would pin a much larger buffer. */
    static final int COPY_BELOW = 16 * 1024;
    /** A slice may pin at most this many times its own size before the message is copied. */
    static final int PIN_FACTOR = 4;
    private ByteBufAllocator alloc = ByteBufAllocator.DEFAULT;
    /** The datagram being fed to the engine now, and the index in it of its view's index 0. */
    private ByteBuf datagram;
    private int base;

    /** Chunks come from {@code alloc} (the channels' allocator). */
    public void allocator(ByteBufAllocator alloc) {
        this.alloc = alloc;
    }

    /** The engine is about to read {@code view}, a view of {@code content}'s readable bytes; null after. */
    public void receiving(ByteBuf content, ByteBuffer view) {
        this.datagram = content;
        this.base = content == null ? 0 : content.readerIndex() - view.position();
    }

    /**
     * A message of one datagram: a retained slice of it, unless it is small beside the buffer it
     * would pin. A read buffer holds a whole batch (16 slots of 64 KB with epoll's recvmmsg), so a
     * slice of a 100 B request would keep up to 1 MiB alive for as long as the request lives; such a
     * message is copied into a buffer of its own size instead (a copy of at most 16 KiB).
     */
    @Override
    public PayloadBuffer keep(ByteBuffer view, int index, int length) {
        if (length < COPY_BELOW && pinned(datagram) > PIN_FACTOR * length) {
            ByteBuf own = alloc.directBuffer(length, length);
            own.writeBytes(datagram, base + index, length);
            return new Part(own);
        }
        return new Part(datagram.retainedSlice(base + index, length));
    }

    /** Bytes a slice of {@code b} keeps alive: its own, or those of the buffer it is a slice of. */
    private static int pinned(ByteBuf b) {
        ByteBuf parent = b.unwrap();
        return parent != null ? parent.capacity() : b.capacity();
    }

    @Override
    public PayloadBuffer allocate(int length) {
        ByteBuf chunk = alloc.directBuffer(length, length);
        chunk.writerIndex(length);
        return new Part(chunk);
    }

    /**
     * The message as one buffer that the caller owns (and releases): its one part, or a composite
     * of its parts; nothing is copied. The message itself is then used up.
     */
    public static ByteBuf toByteBuf(ReceivedMessage m) {
        PayloadBuffer[] parts = m.takeParts();
        if (parts.length == 1) {
            return bufferOf(parts[0]);
        }
        if (parts.length == 0) {
            return Unpooled.EMPTY_BUFFER;
        }
        ByteBuf[] bufs = new ByteBuf[parts.length];
        for (int i = 0; i < parts.length; i++) {
            bufs[i] = bufferOf(parts[i]);
        }
        return Unpooled.wrappedBuffer(bufs.length, bufs);
    }

    /**
     * The one view of a user buffer's readable bytes for the engine, or null if it has several
     * parts (a composite): the engine then reads {@code nioBuffers()} in place. Never a copy.
     */
    public static ByteBuffer viewOf(ByteBuf buf) {
        return buf.nioBufferCount() > 1 ? null : buf.nioBuffer();
    }

    private static ByteBuf bufferOf(PayloadBuffer p) {
        // A message that came over TCP is on the heap (ReceivedMessage.of): nothing to release.
        return p instanceof Part q ? q.buf : Unpooled.wrappedBuffer(p.bytes());
    }

    /** A {@code ByteBuf} holding one reference, as a {@link PayloadBuffer}. */
    private static final class Part implements PayloadBuffer {
        final ByteBuf buf;
        private ByteBuffer view;

        Part(ByteBuf buf) {
            this.buf = buf;
        }

        @Override
        public ByteBuffer bytes() {
            if (view == null) {
                view = buf.nioBuffer(buf.readerIndex(), buf.readableBytes());
            }
            return view;
        }

        @Override
        public void release() {
            buf.release();
        }
    }
}
