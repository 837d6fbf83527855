package io.homa.grpc;

import io.grpc.internal.AbstractReadableBuffer;
import io.grpc.internal.ReadableBuffer;
import io.netty.buffer.ByteBuf;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;

/**
 * A received message's bytes, as grpc-java's {@link ReadableBuffer}: the pooled memory Homa
 * received them in (a slice of a datagram, or of a composite of 64 KiB chunks), never copied.
 * {@link io.grpc.internal.ReadableBuffers#openStream} makes the stream a marshaller reads of it,
 * which is {@code KnownLength}, {@code HasByteBuffer} (the chunks as NIO buffers, read in place)
 * and {@code Detachable} (a marshaller may keep the bytes past the call). The buffer owns one
 * reference; {@link #close} releases it (grpc-java closes the stream once the message is parsed).
 */
final class ByteBufReadableBuffer extends AbstractReadableBuffer {
    private final ByteBuf buf;
    private boolean closed;

    /** Takes over one reference to {@code buf}; its readable bytes are the message. */
    ByteBufReadableBuffer(ByteBuf buf) {
        this.buf = buf;
    }

    @Override
    public int readableBytes() {
        return buf.readableBytes();
    }

    @Override
    public int readUnsignedByte() {
        checkReadable(1);
        return buf.readUnsignedByte();
    }

    @Override
    public void skipBytes(int length) {
        checkReadable(length);
        buf.skipBytes(length);
    }

    @Override
    public void readBytes(byte[] dest, int destOffset, int length) {
        checkReadable(length);
        buf.readBytes(dest, destOffset, length);
    }

    @Override
    public void readBytes(OutputStream dest, int length) throws IOException {
        checkReadable(length);
        buf.readBytes(dest, length);
    }

    @Override
    public ReadableBuffer readBytes(int length) {
        checkReadable(length);
        return new ByteBufReadableBuffer(buf.readRetainedSlice(length));
    }

    @Override
    public boolean hasArray() {
        return buf.hasArray();
    }

    @Override
    public byte[] array() {
        return buf.array();
    }

    @Override
    public int arrayOffset() {
        return buf.arrayOffset() + buf.readerIndex();
    }

    @Override
    public boolean markSupported() {
        return true;
    }

    @Override
    public void mark() {
        buf.markReaderIndex();
    }

    @Override
    public void reset() {
        buf.resetReaderIndex();
    }

    @Override
    public boolean byteBufferSupported() {
        return buf.nioBufferCount() > 0;
    }

    /** The next readable bytes in place: all of them, or the first chunk of a composite. */
    @Override
    public ByteBuffer getByteBuffer() {
        return buf.nioBufferCount() == 1 ? buf.nioBuffer() : buf.nioBuffers()[0];
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            buf.release();
        }
    }
}
