package io.homa.internal.tls;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The frames of a key exchange, inside TLS, each behind a 2-byte length (docs/wire-format.md,
 * "Key exchange"):
 * <ul>
 *   <li>HELLO (1): protocol version (1 byte), PSP version (1), the sender's UDP port (2), its
 *       event loops (2). Each side sends it once, when the handshake is done.</li>
 *   <li>KEYS (2): a count (2), the key length (1), then per key an SPI (4) and the key: the SPIs
 *       the sender issued to the receiver, one per event loop of the receiver, and their derived
 *       keys. Sent in answer to HELLO, and again on each rotation of the sender's master key.</li>
 *   <li>READY (3): empty; the sender has installed the keys of the KEYS it answers.</li>
 * </ul>
 */
final class KeyFrames {
    static final int HELLO = 1;
    static final int KEYS = 2;
    static final int READY = 3;
    static final int PROTOCOL_VERSION = 1;
    /** Longest frame: KEYS for {@link #MAX_LOOPS} loops of 32-byte keys, with room to spare. */
    static final int MAX_FRAME = 64 * 1024;
    /** Most event loops a peer may have (a socket has a handful). */
    static final int MAX_LOOPS = 1024;

    private KeyFrames() {
    }

    static ByteBuf hello(ByteBufAllocator alloc, int pspVersion, int udpPort, int loops) {
        return alloc.buffer(7).writeByte(HELLO).writeByte(PROTOCOL_VERSION).writeByte(pspVersion)
                .writeShort(udpPort).writeShort(loops);
    }

    static ByteBuf keys(ByteBufAllocator alloc, int[] spis, byte[][] keys) {
        int keyLength = keys.length == 0 ? 0 : keys[0].length;
        ByteBuf b = alloc.buffer(4 + spis.length * (4 + keyLength)).writeByte(KEYS).writeShort(spis.length)
                .writeByte(keyLength);
        for (int i = 0; i < spis.length; i++) {
            b.writeInt(spis[i]).writeBytes(keys[i]);
        }
        return b;
    }

    static ByteBuf ready(ByteBufAllocator alloc) {
        return alloc.buffer(1).writeByte(READY);
    }
}
