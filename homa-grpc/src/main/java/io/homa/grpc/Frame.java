package io.homa.grpc;

import io.grpc.InternalMetadata;
import io.grpc.Metadata;
import io.grpc.Status;
import io.homa.HomaRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The homa-grpc framing, version 1 (docs/grpc.md has the table). Every Homa request carries one
 * frame: a 16-byte header (version, type, flags, stream id, sequence number) and a body that
 * depends on the type. Every Homa response carries a {@link Reply}: a version byte, a code, and for
 * {@link Reply#RESULT} the whole answer of a unary call. All integers are big-endian; strings and
 * byte strings are an {@code int} length and the bytes (strings in UTF-8); metadata is a count and
 * that many key/value byte strings in grpc-java's serialized form (binary values raw, not base64).
 *
 * <p>Decoding checks every length against the bytes that are there, so a malformed frame throws
 * {@link Malformed} and never allocates more than the frame's own size.
 *
 * <p>Messages are never copied here: an outgoing one is a component of the frame's composite
 * buffer (behind a header of its own), and an incoming one a retained slice of the received
 * buffer, which the frame owns until someone {@linkplain #takeMessage() takes} it, and releases
 * otherwise ({@link #release()}).
 */
final class Frame {
    private static final Logger log = LoggerFactory.getLogger(Frame.class);
    static final byte VERSION = 1;
    static final int HEADER_BYTES = 16;

    /** Client to server: is anyone serving here? Answered with {@link Reply#ACK}. */
    static final int PING = 1;
    /** Client to server: a new call (method, authority, timeout, initial credit, headers; maybe its message). */
    static final int OPEN = 2;
    /** Server to client: response headers. Sequenced. */
    static final int HEADERS = 3;
    /** Either way: one gRPC message. Sequenced; needs a credit. */
    static final int MESSAGE = 4;
    /** Client to server: the client sends no more messages. Sequenced. */
    static final int HALF_CLOSE = 5;
    /** Server to client: status and trailers, the end of the call. Sequenced. */
    static final int CLOSE = 6;
    /** Either way: the call is abandoned, with a status. Not sequenced. */
    static final int CANCEL = 7;
    /** Either way: the receiver may take {@code credit} more messages. Not sequenced. */
    static final int CREDIT = 8;

    /** OPEN: the frame carries the call's one message. */
    static final int F_MESSAGE = 1;
    /** OPEN: the client half-closes at once (after the message, if any). */
    static final int F_HALF_CLOSE = 2;
    /** OPEN: a unary call; the server answers in the Homa response ({@link Reply#RESULT}). */
    static final int F_UNARY = 4;

    /** OPEN's timeout when the call has no deadline. */
    static final long NO_TIMEOUT = -1;

    final int type;
    final int flags;
    final long streamId;
    final int seq;
    // Type-specific fields; unset ones are zero or null.
    long timeoutNanos = NO_TIMEOUT;
    String method;
    String authority;
    int credit;
    byte[][] metadata;
    Status status;
    /** The received message (a retained slice), until taken; null if none or taken. */
    private ByteBuf message;
    private int messageLength = -1;

    private Frame(int type, int flags, long streamId, int seq) {
        this.type = type;
        this.flags = flags;
        this.streamId = streamId;
        this.seq = seq;
    }

    boolean has(int flag) {
        return (flags & flag) != 0;
    }

    /** Whether the frame carries a message. */
    boolean hasMessage() {
        return messageLength >= 0;
    }

    int messageLength() {
        return messageLength;
    }

    /**
     * The message as a stream over the received bytes (no copy); the stream owns them from now on
     * and releases them when closed.
     *
     * @throws IllegalStateException if the frame has no message, or it was taken already
     */
    InputStream takeMessage() {
        if (message == null) {
            throw new IllegalStateException("no message to take in " + this);
        }
        ByteBuf m = message;
        message = null;
        return MessageBuffers.stream(m);
    }

    /** Releases the message if nobody took it; idempotent. */
    void release() {
        if (message != null) {
            message.release();
            message = null;
        }
    }

    Metadata metadata() {
        return InternalMetadata.newMetadata(metadata);
    }

    static String typeName(int type) {
        switch (type) {
            case PING: return "PING";
            case OPEN: return "OPEN";
            case HEADERS: return "HEADERS";
            case MESSAGE: return "MESSAGE";
            case HALF_CLOSE: return "HALF_CLOSE";
            case CLOSE: return "CLOSE";
            case CANCEL: return "CANCEL";
            case CREDIT: return "CREDIT";
            default: return "type " + type;
        }
    }

    @Override
    public String toString() {
        return typeName(type) + "{stream=" + streamId + ", seq=" + seq + ", flags=" + flags + "}";
    }

    // ---- encoding ----

    static byte[] ping() {
        return new Writer(HEADER_BYTES).header(PING, 0, 0, 0).done();
    }

    /**
     * An OPEN frame; takes over {@code message} (null if none), which becomes the frame's last
     * component, not a copy.
     */
    static ByteBuf open(long streamId, int flags, String method, String authority, long timeoutNanos,
                        int credit, byte[][] headers, ByteBuf message) {
        Utf8 mm = Utf8.of(method, lastMethod);
        lastMethod = mm;
        Utf8 am = Utf8.of(authority, lastAuthority);
        lastAuthority = am;
        byte[] m = mm.bytes;
        byte[] a = am.bytes;
        int size = HEADER_BYTES + 8 + 4 + m.length + 4 + a.length + 4 + metadataSize(headers)
                + (message == null ? 0 : 4);
        Writer w = new Writer(size).header(OPEN, flags | (message == null ? 0 : F_MESSAGE), streamId, 0)
                .putLong(timeoutNanos).bytes(m).bytes(a).putInt(credit).metadata(headers);
        if (message == null) {
            return Unpooled.wrappedBuffer(w.done());
        }
        return Unpooled.wrappedBuffer(Unpooled.wrappedBuffer(w.putInt(message.readableBytes()).done()), message);
    }

    static byte[] headers(long streamId, int seq, byte[][] headers) {
        return new Writer(HEADER_BYTES + metadataSize(headers)).header(HEADERS, 0, streamId, seq)
                .metadata(headers).done();
    }

    /** A MESSAGE frame: a header buffer in front of {@code message}, which it takes over. */
    static ByteBuf message(long streamId, int seq, ByteBuf message) {
        byte[] header = new Writer(HEADER_BYTES).header(MESSAGE, 0, streamId, seq).done();
        return Unpooled.wrappedBuffer(Unpooled.wrappedBuffer(header), message);
    }

    static byte[] halfClose(long streamId, int seq) {
        return new Writer(HEADER_BYTES).header(HALF_CLOSE, 0, streamId, seq).done();
    }

    static byte[] close(long streamId, int seq, Status status, byte[][] trailers) {
        byte[] d = utf8(status.getDescription());
        return new Writer(HEADER_BYTES + 8 + d.length + metadataSize(trailers))
                .header(CLOSE, 0, streamId, seq).status(status.getCode().value(), d).metadata(trailers).done();
    }

    static byte[] cancel(long streamId, Status status) {
        byte[] d = utf8(status.getDescription());
        return new Writer(HEADER_BYTES + 8 + d.length).header(CANCEL, 0, streamId, 0)
                .status(status.getCode().value(), d).done();
    }

    static byte[] credit(long streamId, int credit) {
        return new Writer(HEADER_BYTES + 4).header(CREDIT, 0, streamId, 0).putInt(credit).done();
    }

    // ---- decoding ----

    /** The type of an encoded frame. */
    static int typeOf(ByteBuf frame) {
        return frame.getByte(frame.readerIndex() + 1);
    }

    /**
     * Decodes one frame from the readable bytes of {@code bytes}, which stay the caller's: a
     * message in it is a retained slice that the frame owns (see {@link #takeMessage()}).
     *
     * @throws Malformed if the bytes are not a version-1 frame
     */
    static Frame decode(ByteBuf bytes) throws Malformed {
        Reader r = new Reader(bytes);
        if (bytes.readableBytes() < HEADER_BYTES) {
            throw new Malformed("frame of " + bytes.readableBytes() + " bytes is shorter than the "
                    + HEADER_BYTES + "-byte header");
        }
        int version = r.b.readByte();
        if (version != VERSION) {
            throw new Malformed("framing version " + version + " (this side speaks " + VERSION + ")");
        }
        int type = r.b.readByte();
        int flags = r.b.readUnsignedShort();
        Frame f = new Frame(type, flags, r.b.readLong(), r.b.readInt());
        switch (type) {
            case PING:
            case HALF_CLOSE:
                break;
            case OPEN:
                f.timeoutNanos = r.int64();
                Utf8 mm = r.string(lastMethodRead);
                lastMethodRead = mm;
                f.method = mm.string;
                Utf8 am = r.string(lastAuthorityRead);
                lastAuthorityRead = am;
                f.authority = am.string;
                f.credit = r.nonNegativeInt("credit");
                f.metadata = r.metadata();
                if (f.has(F_MESSAGE)) {
                    f.messageLength = r.nonNegativeInt("message length");
                    r.need(f.messageLength);
                    f.message = r.b.readRetainedSlice(f.messageLength);
                }
                break;
            case HEADERS:
                f.metadata = r.metadata();
                break;
            case MESSAGE:
                f.messageLength = r.b.readableBytes();
                f.message = r.b.readRetainedSlice(f.messageLength);
                break;
            case CLOSE:
                f.status = r.status();
                f.metadata = r.metadata();
                break;
            case CANCEL:
                f.status = r.status();
                break;
            case CREDIT:
                f.credit = r.nonNegativeInt("credit");
                break;
            default:
                throw new Malformed("unknown frame type " + type);
        }
        if (r.b.isReadable()) {
            f.release();
            throw new Malformed(r.b.readableBytes() + " bytes after the end of a " + typeName(type) + " frame");
        }
        return f;
    }

    /**
     * The frame a Homa request carries, or null after answering BAD_FRAME (logged at debug: a
     * peer's bad bytes are its problem, not ours).
     */
    static Frame read(HomaRequest request) {
        ByteBuf payload = request.payload();
        try {
            return decode(payload);
        } catch (Malformed e) {
            log.debug("malformed frame from {}: {}", request.peer(), e.getMessage());
            request.reply(Reply.badFrame(e.getMessage()));
            return null;
        } finally {
            payload.release(); // a message in the frame holds its own reference
        }
    }

    /** A Homa response: how the receiver took a frame, or a unary call's whole answer. */
    /** Metadata with no entries. */
    static final byte[][] NO_METADATA = new byte[0][];

    static final class Reply {
        /** The frame was taken (or, after the stream ended, ignored). */
        static final int ACK = 0;
        /** The receiver does not know the stream (never opened, or long gone). */
        static final int UNKNOWN_STREAM = 1;
        /** The server is shutting down and takes no new calls. */
        static final int REFUSED = 2;
        /** The receiver could not decode the frame; the reply's status says why. */
        static final int BAD_FRAME = 3;
        /** A unary call's answer: headers, messages, status and trailers. */
        static final int RESULT = 4;

        final int code;
        Metadata headers;
        /** A RESULT's messages: retained slices of the received reply, owned by the reply until taken. */
        final List<ByteBuf> messages = new ArrayList<>(1);
        Status status;
        Metadata trailers;

        private Reply(int code) {
            this.code = code;
        }

        private static final byte[][] CODES = {
            {VERSION, ACK}, {VERSION, UNKNOWN_STREAM}, {VERSION, REFUSED},
        };

        /** The two-byte reply for ACK, UNKNOWN_STREAM or REFUSED (a fresh array: the socket keeps it). */
        static byte[] of(int code) {
            return CODES[code].clone();
        }

        static byte[] badFrame(String why) {
            byte[] d = utf8(why);
            return new Writer(2 + 8 + d.length).put(VERSION).put(BAD_FRAME)
                    .status(Status.Code.INTERNAL.value(), d).done();
        }

        /** A result with no headers, messages or trailers: the call ends with {@code status} alone. */
        static byte[] status(Status status) {
            byte[] d = utf8(status.getDescription());
            return new Writer(2 + 1 + 4 + 8 + d.length + metadataSize(NO_METADATA))
                    .put(VERSION).put(RESULT).put(0).putInt(0)
                    .status(status.getCode().value(), d).metadata(NO_METADATA).done();
        }

        /**
         * A unary result ({@code headers} null when the server sent none). It takes over the
         * {@code messages}, which become components of the result between small header buffers
         * (each message's length in front of it), not copies.
         */
        static ByteBuf result(byte[][] headers, List<ByteBuf> messages, Status status, byte[][] trailers) {
            // head and each message's length, each message, tail (head alone without messages)
            ByteBuf[] parts = new ByteBuf[messages.isEmpty() ? 2 : 2 * messages.size() + 1];
            Writer head = new Writer(2 + 1 + (headers == null ? 0 : metadataSize(headers)) + 4
                    + (messages.isEmpty() ? 0 : 4)).put(VERSION).put(RESULT).put(headers == null ? 0 : 1);
            if (headers != null) {
                head.metadata(headers);
            }
            head.putInt(messages.size());
            byte[] d = utf8(status.getDescription());
            Writer tail = new Writer(8 + d.length + metadataSize(trailers));
            int n = 0;
            for (int i = 0; i < messages.size(); i++) {
                ByteBuf m = messages.get(i);
                Writer before = i == 0 ? head : new Writer(4);
                parts[n++] = Unpooled.wrappedBuffer(before.putInt(m.readableBytes()).done());
                parts[n++] = m;
            }
            if (messages.isEmpty()) {
                parts[n++] = Unpooled.wrappedBuffer(head.done());
            }
            parts[n] = Unpooled.wrappedBuffer(tail.status(status.getCode().value(), d).metadata(trailers).done());
            return Unpooled.wrappedBuffer(parts);
        }

        /** Releases the messages nobody took; idempotent. */
        void release() {
            messages.forEach(ByteBuf::release);
            messages.clear();
        }

        /**
         * Decodes a reply from the readable bytes of {@code bytes}, which stay the caller's (the
         * messages of a RESULT are retained slices of them, see {@link #messages}).
         */
        static Reply decode(ByteBuf bytes) throws Malformed {
            Reader r = new Reader(bytes);
            if (bytes.readableBytes() < 2) {
                throw new Malformed("reply of " + bytes.readableBytes() + " bytes");
            }
            int version = r.b.readByte();
            if (version != VERSION) {
                throw new Malformed("reply in framing version " + version + " (this side speaks " + VERSION + ")");
            }
            Reply reply = new Reply(r.b.readByte());
            try {
                reply.read(r);
            } catch (Malformed e) {
                reply.release();
                throw e;
            }
            return reply;
        }

        private void read(Reader r) throws Malformed {
            Reply reply = this;
            switch (reply.code) {
                case ACK:
                case UNKNOWN_STREAM:
                case REFUSED:
                    break;
                case BAD_FRAME:
                    reply.status = r.status();
                    break;
                case RESULT:
                    if (r.uint8() != 0) {
                        reply.headers = InternalMetadata.newMetadata(r.metadata());
                    }
                    int n = r.nonNegativeInt("message count");
                    for (int i = 0; i < n; i++) {
                        int len = r.nonNegativeInt("message length");
                        r.need(len);
                        reply.messages.add(r.b.readRetainedSlice(len));
                    }
                    reply.status = r.status();
                    reply.trailers = InternalMetadata.newMetadata(r.metadata());
                    break;
                default:
                    throw new Malformed("unknown reply code " + reply.code);
            }
            if (r.b.isReadable()) {
                throw new Malformed(r.b.readableBytes() + " bytes after the end of a reply");
            }
        }
    }

    /** Bytes that are not a frame (or reply) of this version. */
    static final class Malformed extends Exception {
        private static final long serialVersionUID = 1L;

        Malformed(String message) {
            super(message);
        }
    }

    private static final byte[] NO_BYTES = {};

    private static byte[] utf8(String s) {
        return s == null ? NO_BYTES : s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * A string with its UTF-8 bytes (never changed): the last method and authority a frame carried,
     * which the next frame most likely carries again (a channel calls few methods of one server),
     * so that it is neither encoded nor decoded again. Any thread; a race only misses.
     */
    private record Utf8(String string, byte[] bytes) {
        /** {@code s} with its bytes: {@code last} if it is the same string, else encoded. */
        static Utf8 of(String s, Utf8 last) {
            return last != null && java.util.Objects.equals(last.string, s) ? last : new Utf8(s, utf8(s));
        }
    }

    /** Sent (a null string is sent as empty). */
    private static volatile Utf8 lastMethod;
    private static volatile Utf8 lastAuthority;
    /** Received (never null). */
    private static volatile Utf8 lastMethodRead;
    private static volatile Utf8 lastAuthorityRead;

    private static int metadataSize(byte[][] kv) {
        int size = 4;
        for (byte[] part : kv) {
            size += 4 + part.length;
        }
        return size;
    }

    /** Writes into an array of exactly the computed size. */
    private static final class Writer {
        final ByteBuffer b;

        Writer(int size) {
            b = ByteBuffer.allocate(size);
        }

        Writer header(int type, int flags, long streamId, int seq) {
            b.put(VERSION).put((byte) type).putShort((short) flags).putLong(streamId).putInt(seq);
            return this;
        }

        Writer put(int v) {
            b.put((byte) v);
            return this;
        }

        Writer putInt(int v) {
            b.putInt(v);
            return this;
        }

        Writer putLong(long v) {
            b.putLong(v);
            return this;
        }

        Writer bytes(byte[] v) {
            b.putInt(v.length).put(v);
            return this;
        }

        Writer status(int code, byte[] description) {
            return putInt(code).bytes(description);
        }

        Writer metadata(byte[][] kv) {
            b.putInt(kv.length / 2);
            for (byte[] part : kv) {
                bytes(part);
            }
            return this;
        }

        byte[] done() {
            if (b.hasRemaining()) {
                throw new IllegalStateException("frame size miscomputed: " + b.remaining() + " bytes left");
            }
            return b.array();
        }
    }

    /** Reads with every length checked against what is left; the bytes' own indices stay as they are. */
    private static final class Reader {
        final ByteBuf b;

        Reader(ByteBuf bytes) {
            b = bytes.duplicate();
        }

        void need(int n) throws Malformed {
            if (n > b.readableBytes()) {
                throw new Malformed("a field of " + n + " bytes runs past the end (" + b.readableBytes() + " left)");
            }
        }

        int nonNegativeInt(String what) throws Malformed {
            need(4);
            int v = b.readInt();
            if (v < 0) {
                throw new Malformed(what + " is negative: " + v);
            }
            return v;
        }

        byte[] byteString() throws Malformed {
            int len = nonNegativeInt("length");
            need(len);
            byte[] v = new byte[len];
            b.readBytes(v);
            return v;
        }

        String string() throws Malformed {
            int len = nonNegativeInt("length");
            need(len);
            String v = b.toString(b.readerIndex(), len, StandardCharsets.UTF_8);
            b.skipBytes(len);
            return v;
        }

        /** A string, as {@code last} if its bytes are the same (nothing decoded), else a new one. */
        Utf8 string(Utf8 last) throws Malformed {
            int len = nonNegativeInt("length");
            need(len);
            if (last != null && last.bytes().length == len && sameBytes(last.bytes())) {
                b.skipBytes(len);
                return last;
            }
            byte[] bytes = new byte[len];
            b.readBytes(bytes);
            return new Utf8(new String(bytes, StandardCharsets.UTF_8), bytes);
        }

        private boolean sameBytes(byte[] want) {
            int at = b.readerIndex();
            for (int i = 0; i < want.length; i++) {
                if (b.getByte(at + i) != want[i]) {
                    return false;
                }
            }
            return true;
        }

        long int64() throws Malformed {
            need(8);
            return b.readLong();
        }

        int uint8() throws Malformed {
            need(1);
            return b.readUnsignedByte();
        }

        Status status() throws Malformed {
            need(4);
            int code = b.readInt();
            String description = string();
            return Status.fromCodeValue(code).withDescription(description.isEmpty() ? null : description);
        }

        byte[][] metadata() throws Malformed {
            int entries = nonNegativeInt("metadata count");
            // Each entry takes at least 8 bytes, so a bogus count cannot make us allocate much.
            need(entries * 8L > Integer.MAX_VALUE ? Integer.MAX_VALUE : entries * 8);
            byte[][] kv = new byte[entries * 2][];
            for (int i = 0; i < kv.length; i++) {
                kv[i] = byteString();
            }
            return kv;
        }
    }
}
