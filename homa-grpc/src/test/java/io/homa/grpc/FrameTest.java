package io.homa.grpc;

import io.grpc.InternalMetadata;
import io.grpc.Metadata;
import io.grpc.Status;
import org.junit.jupiter.api.Test;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static io.homa.grpc.EncodedFrames.decode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The framing: what is written reads back, and anything else is {@link Frame.Malformed}. */
class FrameTest {
    private static final Metadata.Key<String> KEY = Metadata.Key.of("k", Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<byte[]> BIN = Metadata.Key.of("k-bin", Metadata.BINARY_BYTE_MARSHALLER);

    private static byte[][] metadata() {
        Metadata m = new Metadata();
        m.put(KEY, "v");
        m.put(BIN, new byte[] {0, (byte) 0xff, 10});
        return InternalMetadata.serialize(m);
    }

    private static Frame.Reply decodeReply(byte[] b) throws Frame.Malformed {
        return Frame.Reply.decode(Unpooled.wrappedBuffer(b));
    }

    private static Frame.Reply decodeReply(ByteBuf b) throws Frame.Malformed {
        try {
            return Frame.Reply.decode(b);
        } finally {
            b.release();
        }
    }

    /** The readable bytes of an encoded frame, released. */
    private static byte[] bytes(ByteBuf b) {
        try {
            return ByteBufUtil.getBytes(b);
        } finally {
            b.release();
        }
    }

    private static ByteBuf buf(byte[] b) {
        return Unpooled.wrappedBuffer(b);
    }

    private static ByteBuf buf(int... b) {
        byte[] bytes = new byte[b.length];
        for (int i = 0; i < b.length; i++) {
            bytes[i] = (byte) b[i];
        }
        return Unpooled.wrappedBuffer(bytes);
    }

    private static byte[] bytes(InputStream in) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        in.transferTo(out);
        return out.toByteArray();
    }

    /** The last method and authority are remembered both ways: a change, a repeat and a null still read back right. */
    @Test
    void openFrames_readBackTheirOwnMethodAndAuthority_whateverCameBefore() throws Exception {
        String[][] calls = {
            {"svc/A", "host:1"}, {"svc/A", "host:1"}, {"svc/B", "host:1"}, {"svc/A", "other:2"},
            {"svc/A", null}, {"svc/A", null}, {"svc/\u00e9", "host:1"}, {"svc/B", ""}, {"svc/B", "host:1"},
        };
        for (String[] c : calls) {
            Frame open = decode(Frame.open(1, Frame.F_UNARY, c[0], c[1], -1, 0, metadata(), null));
            assertEquals(c[0], open.method);
            assertEquals(c[1] == null ? "" : c[1], open.authority, "a null authority is sent as empty");
        }
        // Same length, other bytes: not taken for the remembered one.
        assertEquals("svc/C", decode(Frame.open(1, 0, "svc/C", "h", -1, 0, metadata(), null)).method);
        assertEquals("svc/D", decode(Frame.open(1, 0, "svc/D", "h", -1, 0, metadata(), null)).method);
    }

    @Test
    void everyFrameReadsBack() throws Exception {
        byte[] message = {1, 2, 3};
        Frame open = decode(Frame.open(42, Frame.F_HALF_CLOSE, "svc/M", "host:1", 5_000, 7, metadata(), buf(message)));
        assertEquals(Frame.OPEN, open.type);
        assertEquals(42, open.streamId);
        assertTrue(open.has(Frame.F_HALF_CLOSE) && open.has(Frame.F_MESSAGE) && !open.has(Frame.F_UNARY));
        assertEquals("svc/M", open.method);
        assertEquals("host:1", open.authority);
        assertEquals(5_000, open.timeoutNanos);
        assertEquals(7, open.credit);
        assertEquals("v", open.metadata().get(KEY));
        assertArrayEquals(new byte[] {0, (byte) 0xff, 10}, open.metadata().get(BIN));
        assertArrayEquals(message, bytes(open.takeMessage()));

        Frame m = decode(Frame.message(9, 3, buf(message)));
        assertEquals(3, m.seq);
        assertArrayEquals(message, bytes(m.takeMessage()));

        String description = "\t\nwhitespace\r\nand \u263A and \uD83D\uDE08";
        Frame close = decode(Frame.close(9, 4, Status.ABORTED.withDescription(description), metadata()));
        assertEquals(Status.Code.ABORTED, close.status.getCode());
        assertEquals(description, close.status.getDescription());
        assertEquals("v", close.metadata().get(KEY));

        Frame cancel = decode(Frame.cancel(9, Status.CANCELLED));
        assertEquals(Status.Code.CANCELLED, cancel.status.getCode());
        assertNull(cancel.status.getDescription());
        assertEquals(11, decode(Frame.credit(9, 11)).credit);
        assertEquals(Frame.HALF_CLOSE, decode(Frame.halfClose(9, 5)).type);
        assertEquals(Frame.PING, decode(Frame.ping()).type);
        assertEquals(Frame.HEADERS, decode(Frame.headers(9, 0, metadata())).type);
    }

    @Test
    void repliesReadBack() throws Exception {
        Frame.Reply r = decodeReply(Frame.Reply.result(metadata(), List.of(buf(5), buf()),
                Status.NOT_FOUND.withDescription("no"), metadata()));
        assertEquals(Frame.Reply.RESULT, r.code);
        assertEquals("v", r.headers.get(KEY));
        assertEquals(2, r.messages.size());
        assertArrayEquals(new byte[] {5}, ByteBufUtil.getBytes(r.messages.get(0)));
        assertEquals(Status.Code.NOT_FOUND, r.status.getCode());
        assertEquals("v", r.trailers.get(KEY));
        assertNull(decodeReply(Frame.Reply.result(null, List.of(), Status.OK, new byte[0][])).headers);
        assertEquals(Frame.Reply.UNKNOWN_STREAM, decodeReply(Frame.Reply.of(Frame.Reply.UNKNOWN_STREAM)).code);
        assertEquals("bad", decodeReply(Frame.Reply.badFrame("bad")).status.getDescription());
    }

    @Test
    void everyTruncationIsMalformed() {
        List<byte[]> frames = new ArrayList<>(List.of(
                bytes(Frame.open(1, Frame.F_UNARY, "a/b", "h", -1, 0, metadata(), buf(1))),
                Frame.close(1, 2, Status.INTERNAL.withDescription("x"), metadata()),
                Frame.credit(1, 1), Frame.cancel(1, Status.CANCELLED)));
        for (byte[] f : frames) {
            for (int len = 0; len < f.length; len++) {
                byte[] cut = Arrays.copyOf(f, len);
                assertThrows(Frame.Malformed.class, () -> decode(cut), "a frame cut to " + len + " bytes");
            }
            byte[] longer = Arrays.copyOf(f, f.length + 1);
            assertThrows(Frame.Malformed.class, () -> decode(longer), "a byte past the end");
        }
        byte[] result = bytes(Frame.Reply.result(metadata(), List.of(buf(1)), Status.OK, metadata()));
        for (int len = 0; len < result.length; len++) {
            byte[] cut = Arrays.copyOf(result, len);
            assertThrows(Frame.Malformed.class, () -> decodeReply(cut), "a reply cut to " + len + " bytes");
        }
    }

    @Test
    void otherVersionsTypesAndHugeCountsAreMalformed() {
        byte[] ping = Frame.ping();
        ping[0] = 2;
        assertThrows(Frame.Malformed.class, () -> decode(ping));
        byte[] unknown = Frame.ping();
        unknown[1] = 99;
        assertThrows(Frame.Malformed.class, () -> decode(unknown));
        // HEADERS claiming 2^31-1 entries in a frame of 20 bytes: refused before any allocation.
        byte[] headers = Frame.headers(1, 0, new byte[0][]);
        headers[16] = 0x7f;
        headers[17] = (byte) 0xff;
        headers[18] = (byte) 0xff;
        headers[19] = (byte) 0xff;
        assertThrows(Frame.Malformed.class, () -> decode(headers));
    }

    @Test
    void randomBytesAreFramesOrMalformedNeverAnythingElse() {
        Random random = new Random(7);
        for (int i = 0; i < 20_000; i++) {
            byte[] b = new byte[random.nextInt(64)];
            random.nextBytes(b);
            if (b.length > 1) {
                b[0] = Frame.VERSION;
                b[1] = (byte) (1 + random.nextInt(8));
            }
            try {
                decode(b);
            } catch (Frame.Malformed expected) {
                // fine
            }
            try {
                decodeReply(b);
            } catch (Frame.Malformed expected) {
                // fine
            }
        }
    }
}
