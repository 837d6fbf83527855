package io.homa.bench;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.CorruptedFrameException;

import java.util.List;

/**
 * Splits the byte stream into whole frames, length prefix included, each a retained slice of the
 * receive buffer (no copy when a read holds whole frames). The next handler owns and releases
 * every frame.
 */
public final class TcpFrameDecoder extends ByteToMessageDecoder {
    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        while (in.readableBytes() >= TcpFrames.LENGTH_FIELD) {
            int length = in.getInt(in.readerIndex());
            if (length < TcpFrames.ID_FIELD || length > TcpFrames.ID_FIELD + TcpFrames.MAX_PAYLOAD) {
                throw new CorruptedFrameException("bad frame length " + length);
            }
            int total = TcpFrames.LENGTH_FIELD + length;
            if (in.readableBytes() < total) {
                return;
            }
            out.add(in.readRetainedSlice(total));
        }
    }
}
