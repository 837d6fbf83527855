package io.homa.internal.tcp;

import io.homa.internal.ShellConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The framing of the TCP fallback (docs/deployment.md): every frame is a 4-byte big-endian length
 * (of what follows), then a header, then the message. Requests and responses are matched by a
 * call id the client picks per connection, so one connection carries many calls at once and
 * answers may come in any order.
 *
 * <pre>
 * request:  length u32 | kind u8 = 1 | call id u64 | Homa RPC id u64 | client UDP port u16 | age ns u64 | request
 * response: length u32 | status u8   | call id u64 | response (OK) or a UTF-8 reason (otherwise)
 * </pre>
 *
 * A retry of a Homa call names its Homa RPC id, the client's UDP port and how long ago the Homa
 * RPC started, so that the server can tell whether it received the request over Homa already
 * ({@link #REFUSED}); a call sent over TCP directly has RPC id 0.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class TcpFrames {
    static final int LENGTH_FIELD = 4;
    /** The kind byte of a request (a version, too: anything else closes the connection). */
    static final byte REQUEST = 1;
    /** Request header after the length: kind, call id, Homa RPC id, UDP port, age. */
    static final int REQUEST_HEADER = 1 + 8 + 8 + 2 + 8;
    /** Response header after the length: status, call id. */
    static final int RESPONSE_HEADER = 1 + 8;

    /** The response follows. */
    public static final byte OK = 0;
    /** The server dropped the request (handler threw, no reply within its request timeout, no handler). */
    public static final byte DROPPED = 1;
    /** The server refused the request unrun: too many wait for its handler. */
    public static final byte OVERLOADED = 2;
    /**
     * A retry the server did not run: it received the request over Homa (or cannot rule that out:
     * the retry came too late), so the Homa RPC is the one that counts.
     */
    public static final byte REFUSED = 3;

    private TcpFrames() {
    }

    /**
     * How long a server remembers the requests it received over Homa, against TCP retries of
     * them: 2 s plus 4 probe intervals (3 s by default), far more than a retry takes (one probe
     * interval and a TCP handshake). A retry whose Homa RPC is older than this less a second is
     * refused: the server could no longer tell.
     */
    public static long retryWindowNanos(ShellConfig config) {
        return Duration.ofSeconds(2).plus(config.probeInterval().multipliedBy(4)).toNanos();
    }

    /** Oldest Homa RPC whose TCP retry a server still runs (the window less a second for the trip). */
    static long oldestRetryNanos(ShellConfig config) {
        return retryWindowNanos(config) - Duration.ofSeconds(1).toNanos();
    }

    /** A decoder of whole frames (length prefix stripped) up to {@code header + maxMessage} bytes. */
    static LengthFieldBasedFrameDecoder decoder(int header, int maxMessage) {
        return new LengthFieldBasedFrameDecoder(header + maxMessage, 0, LENGTH_FIELD, 0, LENGTH_FIELD);
    }

    /** The length prefix and header of a request whose message has {@code length} bytes. */
    static ByteBuf requestHeader(ByteBufAllocator alloc, long callId, long homaRpcId, int udpPort, long ageNanos,
                                 int length) {
        return alloc.buffer(LENGTH_FIELD + REQUEST_HEADER).writeInt(REQUEST_HEADER + length).writeByte(REQUEST)
                .writeLong(callId).writeLong(homaRpcId).writeShort(udpPort).writeLong(ageNanos);
    }

    /** The length prefix and header of a response whose body has {@code length} bytes. */
    static ByteBuf responseHeader(ByteBufAllocator alloc, byte status, long callId, int length) {
        return alloc.buffer(LENGTH_FIELD + RESPONSE_HEADER).writeInt(RESPONSE_HEADER + length).writeByte(status)
                .writeLong(callId);
    }

    /** A whole error response: header and reason. */
    static ByteBuf error(ByteBufAllocator alloc, byte status, long callId, String reason) {
        byte[] text = reason.getBytes(StandardCharsets.UTF_8);
        return Unpooled.wrappedBuffer(responseHeader(alloc, status, callId, text.length), Unpooled.wrappedBuffer(text));
    }

    /** A decoded response: its status and body (the response, or a reason). */
    public record Reply(byte status, byte[] body) {
        /** The body read as the reason of an error status. */
        public String reason() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }
}
