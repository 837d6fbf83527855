package io.homa.grpc;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.grpc.Metadata;
import io.grpc.Status;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;

import static io.homa.grpc.EncodedFrames.decode;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Putting frames back in order, delivering as asked, and holding a peer to its credits. */
class InboundTest {
    private final List<String> delivered = new ArrayList<>();
    private final Inbound inbound = new Inbound(new Inbound.Sink() {
        @Override
        public void headers(Metadata headers) {
            delivered.add("headers");
        }

        @Override
        public void message(InputStream message) {
            try (message) {
                delivered.add("message " + message.read());
            } catch (java.io.IOException e) {
                throw new AssertionError(e);
            }
        }

        @Override
        public void end(Status status, Metadata trailers) {
            delivered.add("end " + (status == null ? "half-close" : status.getCode()));
        }
    }, 0);

    private static ByteBuf buf(int b) {
        return Unpooled.wrappedBuffer(new byte[] {(byte) b});
    }

    @Test
    void framesArriveInAnyOrderAndLeaveInOrderAsAsked() throws Exception {
        assertEquals(3, inbound.request(3));
        inbound.accept(decode(Frame.close(1, 3, Status.OK, new byte[0][])));
        inbound.accept(decode(Frame.message(1, 2, buf(2))));
        assertEquals(List.of(), delivered);
        inbound.accept(decode(Frame.headers(1, 0, new byte[0][])));
        assertEquals(List.of("headers"), delivered);
        inbound.accept(decode(Frame.message(1, 1, buf(1))));
        assertEquals(List.of("headers", "message 1", "message 2", "end OK"), delivered);
    }

    @Test
    void theEndWaitsUntilEveryMessageWasAskedFor() throws Exception {
        assertEquals(2, inbound.request(2));
        inbound.accept(decode(Frame.message(1, 0, buf(7))));
        inbound.accept(decode(Frame.message(1, 1, buf(8))));
        inbound.accept(decode(Frame.close(1, 2, Status.OK, new byte[0][])));
        assertEquals(List.of("message 7", "message 8", "end OK"), delivered);
        delivered.clear();
        Inbound slow = new Inbound(new Inbound.Sink() {
            @Override public void headers(Metadata h) { }
            @Override public void message(InputStream m) { delivered.add("message"); }
            @Override public void end(Status s, Metadata t) { delivered.add("end"); }
        }, 0);
        slow.request(1);
        slow.accept(decode(Frame.message(1, 0, buf(1))));
        assertEquals(List.of("message"), delivered);
        slow.acceptInOrder(InputStream.nullInputStream());
        slow.acceptEnd(Status.OK, new Metadata());
        assertEquals(List.of("message"), delivered, "one message not yet asked for holds the end back");
        assertEquals(0, slow.request(1), "no credit after the end");
        assertEquals(List.of("message", "message", "end"), delivered);
    }

    @Test
    void aPeerThatSendsMoreThanItsCreditsIsRefused() throws Exception {
        inbound.request(1);
        inbound.accept(decode(Frame.message(1, 0, buf(1))));
        assertThrows(Inbound.Violation.class, () -> inbound.accept(decode(Frame.message(1, 1, buf(2)))));
    }

    @Test
    void framesFarAheadCannotPileUp() throws Exception {
        inbound.request(1);
        inbound.accept(decode(Frame.headers(1, 5, new byte[0][])));
        inbound.accept(decode(Frame.headers(1, 6, new byte[0][])));
        inbound.accept(decode(Frame.headers(1, 7, new byte[0][])));
        inbound.accept(decode(Frame.headers(1, 8, new byte[0][])));
        assertThrows(Inbound.Violation.class, () -> inbound.accept(decode(Frame.headers(1, 9, new byte[0][]))));
    }
}
