package io.homa.internal.udp;

import io.netty.buffer.ByteBuf;

import java.nio.ByteBuffer;

/**
 * The engine's {@link ByteBuffer} view of each received datagram, made once per read buffer
 * instead of once per datagram: a view is a 64-byte object, and a small call's datagrams (request,
 * response, acknowledgements) made two or three of them per call. The datagrams of one
 * {@code recvmmsg} round are slices of one read buffer, and a read buffer that was released is
 * often handed out again for the next read, so a view of the read buffer's memory serves many
 * datagrams, each with its position and limit set.
 *
 * <p>It is correct by construction, not by bookkeeping: a cached view is used only for a datagram
 * whose read buffer has exactly the view's memory (the same address and capacity), memory the
 * datagram's own reference keeps allocated while the engine reads it. The view is this object's
 * alone (not Netty's shared internal buffer, which user code on other threads may move), and valid
 * only until the next {@link #of}: the engine reads it during one {@code onDatagram} and keeps no
 * reference to it. Buffers without a memory address (heap, or no {@code Unsafe}) get a view each.
 *
 * <p>Confined to one engine loop (used under its engine lock).
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class DatagramViews {
    /** The memory the cached view covers: its address and capacity; {@code view} null if none. */
    private long address;
    private int capacity;
    private ByteBuffer view;

    /**
     * A view of {@code content}'s readable bytes, position and limit around them (network order);
     * valid until the next call.
     */
    public ByteBuffer of(ByteBuf content) {
        if (!content.hasMemoryAddress() || content.nioBufferCount() != 1) {
            return content.nioBuffer();
        }
        // A slice's parent (through any leak-detector wrapper) is the read buffer its round's
        // datagrams share.
        ByteBuf whole = content;
        for (int depth = 0; depth < 4; depth++) {
            ByteBuf parent = whole.unwrap();
            if (parent == null || !parent.hasMemoryAddress()) {
                break;
            }
            whole = parent;
        }
        long wholeAddress = whole.memoryAddress();
        int wholeCapacity = whole.capacity();
        long start = content.memoryAddress() + content.readerIndex();
        int length = content.readableBytes();
        if (start < wholeAddress || start + length > wholeAddress + wholeCapacity) {
            return content.nioBuffer(); // not within its parent's memory (never seen): no shortcut
        }
        if (view == null || address != wholeAddress || capacity != wholeCapacity) {
            view = whole.nioBuffer(0, wholeCapacity);
            address = wholeAddress;
            capacity = wholeCapacity;
        }
        int at = (int) (start - wholeAddress);
        view.limit(at + length).position(at);
        return view;
    }
}
