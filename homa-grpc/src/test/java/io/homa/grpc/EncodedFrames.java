package io.homa.grpc;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/** Decoding what the encoders wrote, for tests: the encoded buffer is released after decoding. */
final class EncodedFrames {
    private EncodedFrames() {
    }

    static Frame decode(byte[] frame) throws Frame.Malformed {
        return Frame.decode(Unpooled.wrappedBuffer(frame));
    }

    static Frame decode(ByteBuf frame) throws Frame.Malformed {
        try {
            return Frame.decode(frame);
        } finally {
            frame.release();
        }
    }
}
