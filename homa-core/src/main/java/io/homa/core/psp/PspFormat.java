package io.homa.core.psp;

import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;

import java.nio.ByteBuffer;

/**
 * Layout of a sealed Homa datagram, after PSP's transport mode (the PSP Architecture
 * Specification, google/psp): a 16-byte PSP header, then the Homa packet, whose first
 * {@link #clearLength} bytes (its header) stay readable and the rest is AES-GCM ciphertext, then
 * a 16-byte integrity check value (the GCM tag). The header and the readable bytes are
 * authenticated as additional data; the nonce is SPI || IV. docs/wire-format.md has the diagram.
 *
 * <pre>
 * 0      next header (0xFD: "Homa", from the experimental range of RFC 3692)
 * 1      header extension length, 8-byte units (0: no extension; a receiver skips one it does not know)
 * 2      reserved (2 bits) | crypt offset (6 bits): readable Homa bytes, 4-byte units
 * 3      S (1) | D (1) | version (4) | V (1) | 1 (1)
 * 4..7   SPI (top bit: which of the receiver's two master keys)
 * 8..15  IV (per SPI a counter that never repeats)
 * </pre>
 *
 * <p>The readable bytes are the Homa header a receiver needs to walk a datagram that GRO
 * coalesced (each segment is its own sealed packet): the whole 40-byte DATA header, the ACK header
 * up to its count, and the 12-byte common header of every other type. Payloads and the bodies of
 * control packets are encrypted. Homa's first two bytes ("HM") can never start a sealed packet
 * (0xFD, 0x00), so a plain and a sealed peer each see the other's datagrams for what they are.
 */
public final class PspFormat {
    private PspFormat() {
    }

    public static final int HEADER = 16;
    public static final int ICV = 16;
    /** Bytes a sealed datagram adds to its Homa packet. */
    public static final int OVERHEAD = HEADER + ICV;
    /** Next-header value of a sealed Homa packet. */
    public static final int NEXT_HEADER_HOMA = 0xFD;

    public static final int OFF_NEXT_HEADER = 0;
    public static final int OFF_EXT_LENGTH = 1;
    public static final int OFF_CRYPT_OFFSET = 2;
    public static final int OFF_FLAGS = 3;
    public static final int OFF_SPI = 4;
    public static final int OFF_IV = 8;

    /** PSP version 0: AES-GCM-128. */
    public static final int VERSION_GCM_128 = 0;
    /** PSP version 1: AES-GCM-256. */
    public static final int VERSION_GCM_256 = 1;

    /** The SPI bit that chooses the receiver's master key (0 or 1). */
    public static final int SPI_KEY_BIT = 0x8000_0000;

    /** Byte 3 for {@code version}: S = 0, D = 0, V = 0 (no virtualization cookie), and the final 1. */
    static int flagsByte(int version) {
        return (version & 0x0F) << 2 | 0x01;
    }

    /** The version field of byte 3. */
    static int version(int flags) {
        return (flags >>> 2) & 0x0F;
    }

    /** Whether the datagram at {@code at} starts like a sealed packet (next header and reserved bits). */
    public static boolean looksSealed(ByteBuffer b, int at, int available) {
        return available >= 2 && (b.get(at + OFF_NEXT_HEADER) & 0xFF) == NEXT_HEADER_HOMA;
    }

    /**
     * How many bytes at the start of the Homa packet at {@code at} ({@code length} bytes) stay
     * readable: its header, as the class comment says, a multiple of 4 (PSP's crypt offset unit),
     * never more than the packet.
     */
    public static int clearLength(ByteBuffer b, int at, int length) {
        if (length < WireFormat.COMMON_HEADER) {
            return length & ~3;
        }
        int type = b.get(at + WireFormat.OFF_TYPE) & 0xFF;
        int clear;
        if (type == PacketType.DATA.code) {
            clear = WireFormat.DATA_HEADER;
        } else if (type == PacketType.ACK.code) {
            clear = WireFormat.ACK_OFF_ENTRIES;
        } else {
            clear = WireFormat.COMMON_HEADER;
        }
        return Math.min(clear, length & ~3);
    }

    /**
     * The length of the sealed packet at {@code at} as its readable bytes give it (the PSP header,
     * the Homa packet's length from its header, the tag), or -1 if they do not: how a receiver
     * walks a coalesced datagram of sealed segments. Nothing is trusted until the tag is checked.
     */
    public static int sealedLength(ByteBuffer b, int at, int available) {
        if (available < HEADER + WireFormat.COMMON_HEADER + ICV || !looksSealed(b, at, available)) {
            return -1;
        }
        int ext = (b.get(at + OFF_EXT_LENGTH) & 0xFF) * 8;
        int clear = (b.get(at + OFF_CRYPT_OFFSET) & 0x3F) * 4;
        int homaAt = at + HEADER + ext;
        int readable = Math.min(clear, available - HEADER - ext);
        if (readable < WireFormat.COMMON_HEADER) {
            return -1;
        }
        int packet = io.homa.core.wire.PacketDecoder.packetLength(b, homaAt, readable);
        return packet < 0 ? -1 : HEADER + ext + packet + ICV;
    }
}
