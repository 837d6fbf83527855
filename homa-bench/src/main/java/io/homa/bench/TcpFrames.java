package io.homa.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The TCP baselines' framing: {@code [length u32][rpc id u64][payload]}, where length counts the id
 * and the payload. The id lets one connection carry many calls whose replies come back in any
 * order (the gRPC/HTTP2 pattern); an echo server sends each frame back as it came.
 */
public final class TcpFrames {
    /** Bytes of the length field. */
    public static final int LENGTH_FIELD = 4;
    /** Bytes of the rpc id. */
    public static final int ID_FIELD = 8;
    /** Bytes in front of the payload. */
    public static final int HEADER = LENGTH_FIELD + ID_FIELD;
    /** The largest payload a frame carries (64 MiB); a longer length field is a protocol error. */
    public static final int MAX_PAYLOAD = 64 << 20;

    private TcpFrames() {
    }

    /**
     * A frame in a new direct buffer (the one copy of the request, from the heap into memory the
     * kernel can read without another copy).
     */
    public static ByteBuf encode(ByteBufAllocator alloc, long id, byte[] payload) {
        ByteBuf frame = alloc.directBuffer(HEADER + payload.length);
        frame.writeInt(ID_FIELD + payload.length);
        frame.writeLong(id);
        frame.writeBytes(payload);
        return frame;
    }

    /** The id of a whole frame (as emitted by {@link TcpFrameDecoder}). */
    public static long id(ByteBuf frame) {
        return frame.getLong(frame.readerIndex() + LENGTH_FIELD);
    }

    /** Payload length of a whole frame. */
    public static int payloadLength(ByteBuf frame) {
        return frame.readableBytes() - HEADER;
    }

    /** A fresh array with the payload of a whole frame (the frame is not released). */
    public static byte[] payload(ByteBuf frame) {
        byte[] out = new byte[payloadLength(frame)];
        frame.getBytes(frame.readerIndex() + HEADER, out);
        return out;
    }
}
