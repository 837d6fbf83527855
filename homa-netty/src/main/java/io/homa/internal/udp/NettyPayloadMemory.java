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
 * keeps a reference to that datagram's buffer (no copy, see {@link #keep}); a longer one is assembled in chunks of
 * pooled direct memory (one copy). {@link #toByteBuf} then hands a delivered message to user code
 * as one {@code ByteBuf} over those same buffers. Confined to one event loop, except
 * {@code toByteBuf}, which any thread may call.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class NettyPayloadMemory implements PayloadMemory {
    private ByteBufAllocator alloc = ByteBufAllocator.DEFAULT;
    /** The datagram being fed to the engine now, and the index in it of its view's index 0. */
    private ByteBuf datagram;
    private int base;
    /** The part last kept from {@link #datagram}, or null: a second one makes both share it. */
    private Kept keptFromDatagram;

    /** Chunks come from {@code alloc} (the channels' allocator). */
    public void allocator(ByteBufAllocator alloc) {
        this.alloc = alloc;
    }

    /** The engine is about to read {@code view}, a view of {@code content}'s readable bytes; null after. */
    public void receiving(ByteBuf content, ByteBuffer view) {
        this.datagram = content;
        this.base = content == null ? 0 : content.readerIndex() - view.position();
        this.keptFromDatagram = null;
    }

    /**
     * A message of one datagram: that datagram's buffer, retained, and where the message lies in it
     * (no copy, and no slice object until a user asks for a {@code ByteBuf}: a client that takes
     * the response as a byte array copies it straight out). It pins the whole read buffer, up to
     * 1 MiB with recvmmsg's 64 KB slots; copying small messages out instead made
     * TcpFallbackTest fail on io_uring with JDK 25, not yet understood: open, docs/netty.md.
     */
    @Override
    public PayloadBuffer keep(ByteBuffer view, int index, int length) {
        Kept p = new Kept(datagram.retain(), base + index, length, keptFromDatagram == null);
        if (keptFromDatagram != null) { // several messages in one (coalesced) datagram: each needs a slice of its own
            keptFromDatagram.shared();
        }
        keptFromDatagram = p;
        return p;
    }

    /**
     * {@code m} with its bytes in memory of its own when it is a message kept in the datagram it
     * arrived in (the datagram's read buffer given back; {@code m} is used up), else {@code m}
     * itself. A kept message holds its whole read buffer (a recvmmsg batch, up to 1 MiB) for as
     * long as it lives: a request that waits for a handler thread, or that a handler holds to
     * answer later, must not (measured: 200 such requests of 100 B held 226 MB of direct memory).
     * A message assembled in chunks holds only those. The copy is a heap array: a pooled direct
     * buffer, allocated on the loop and freed on a handler thread, cost 100 B calls under load
     * 12-27% more CPU per call (measured); the array nothing beyond the runs' spread, for 170-200 B
     * more allocated per call. Where it cannot be allocated, {@code m} is returned as it is: held,
     * not lost. Any thread.
     */
    public ReceivedMessage detached(ReceivedMessage m) {
        if (!(m instanceof Kept k)) {
            return m;
        }
        byte[] own;
        try {
            own = k.toByteArray(); // copied straight out of the datagram's buffer (Part.copyInto)
        } catch (OutOfMemoryError e) {
            return m; // held where it was read, not lost
        }
        k.release();
        return new Chunk(Unpooled.wrappedBuffer(own), own.length);
    }

    @Override
    public PayloadBuffer allocate(int length) {
        ByteBuf chunk = alloc.directBuffer(length, length);
        chunk.writerIndex(length);
        return new Chunk(chunk, length);
    }

    /**
     * The message as one buffer that the caller owns (and releases): its one part, or a composite
     * of its parts; nothing is copied. The message itself is then used up.
     */
    public static ByteBuf toByteBuf(ReceivedMessage m) {
        if (m.partCount() == 1) {
            return bufferOf(m.takeOnlyPart());
        }
        PayloadBuffer[] parts = m.takeParts();
        if (parts.length == 0) {
            return Unpooled.EMPTY_BUFFER;
        }
        ByteBuf[] bufs = new ByteBuf[parts.length];
        for (int i = 0; i < parts.length; i++) {
            bufs[i] = bufferOf(parts[i]);
        }
        return Unpooled.wrappedBuffer(bufs.length, bufs);
    }

    private static ByteBuf bufferOf(PayloadBuffer p) {
        // A message that came over TCP is on the heap (ReceivedMessage.of): nothing to release.
        return p instanceof Part q ? q.toByteBuf() : Unpooled.wrappedBuffer(p.bytes());
    }

    /**
     * Received bytes in a {@code ByteBuf} of which it holds one reference, as a {@link PayloadBuffer};
     * and, when they are a whole message, that {@link ReceivedMessage} too (the engine delivers it
     * as it is: one object per message, not two).
     */
    private abstract static sealed class Part extends ReceivedMessage implements PayloadBuffer permits Kept, Chunk {
        final ByteBuf buf;

        Part(ByteBuf buf, int length) {
            super(length);
            this.buf = buf;
        }

        /** Where its bytes start in {@link #buf}. */
        abstract int start();

        /** Its bytes as a buffer that takes over its reference. */
        abstract ByteBuf toByteBuf();

        /** Copied straight out of {@link #buf}, without making a view. */
        @Override
        public final int copyInto(byte[] dst, int offset) {
            buf.getBytes(start(), dst, offset, length());
            return length();
        }

        @Override
        public void free() {
            buf.release();
        }
    }

    /**
     * Bytes {@code [index, index + length)} of a datagram's buffer, kept instead of copied. 24 bytes:
     * two of them per small call (the request at the server, the response at the client), so no
     * field it can do without ({@link #bytes()} makes its view when asked: only a user's
     * {@code buffers()} asks; its flag shares the index's int).
     */
    private static final class Kept extends Part {
        /**
         * The index, or its complement ({@code ~index}, negative) while this is the only part kept
         * from its datagram, whose buffer object (a slice of the read's buffer, or a buffer of its
         * own) nobody else then uses: handed over as it is, indices set, instead of a slice of it.
         * Changed on the loop only, before the part is delivered (whose hand-off to another
         * thread publishes it, as it publishes the buffer's bytes).
         */
        private int at;

        Kept(ByteBuf buf, int index, int length, boolean sole) {
            super(buf, length);
            this.at = sole ? ~index : index;
        }

        /** Another part was kept from the same datagram: this one is not the only one. */
        void shared() {
            at = start();
        }

        @Override
        int start() {
            return at < 0 ? ~at : at;
        }

        @Override
        public ByteBuffer bytes() {
            return buf.nioBuffer(start(), length());
        }

        /**
         * A slice (which shares its parent's count); a sole part's datagram buffer itself, readable
         * over just the message (one object less per message: the slice was a fifth of a
         * small-RPC server's allocation). Copying a small message into a pooled buffer instead of
         * slicing it allocated more, not less (measured: 535 to 645 B per 100 B call).
         */
        @Override
        ByteBuf toByteBuf() {
            int index = start();
            return at < 0 ? buf.setIndex(index, index + length()) : buf.slice(index, length());
        }
    }

    /** A buffer of its own that the engine assembles a message in (it writes through {@link #bytes()}). */
    private static final class Chunk extends Part {
        private ByteBuffer view;

        Chunk(ByteBuf chunk, int length) {
            super(chunk, length);
        }

        @Override
        public ByteBuffer bytes() {
            if (view == null) {
                view = buf.nioBuffer(0, length());
            }
            return view;
        }

        @Override
        int start() {
            return 0;
        }

        @Override
        ByteBuf toByteBuf() {
            return buf;
        }
    }
}
