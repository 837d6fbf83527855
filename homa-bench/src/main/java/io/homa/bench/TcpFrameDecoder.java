package io.homa.bench;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;

import java.nio.ByteOrder;

/**
 * Splits the byte stream into whole frames, length prefix included, each a retained slice of the
 * received bytes. The next handler owns and releases every frame.
 *
 * <p>Received reads are gathered with the composite cumulator, never copied: an echo server keeps
 * a slice of the cumulation alive until its reply is written, and while a slice is alive Netty's
 * default (merge) cumulator cannot grow the buffer in place: it copies the unread bytes into a new
 * buffer of just the needed size, again at the next read that does not fit. With 1 MB frames back
 * to back on one connection that copied up to a megabyte per read on the server's event loop
 * (tcp-single's slow bulk path; see docs/benchmarks.md).
 */
public final class TcpFrameDecoder extends LengthFieldBasedFrameDecoder {
    public TcpFrameDecoder() {
        super(TcpFrames.HEADER + TcpFrames.MAX_PAYLOAD, 0, TcpFrames.LENGTH_FIELD, 0, 0);
        setCumulator(COMPOSITE_CUMULATOR);
    }

    @Override
    protected long getUnadjustedFrameLength(ByteBuf buf, int offset, int length, ByteOrder order) {
        long frameLength = super.getUnadjustedFrameLength(buf, offset, length, order);
        if (frameLength < TcpFrames.ID_FIELD) {
            throw new CorruptedFrameException("bad frame length " + frameLength);
        }
        return frameLength;
    }
}
