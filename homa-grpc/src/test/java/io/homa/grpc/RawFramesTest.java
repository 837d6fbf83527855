package io.homa.grpc;

import io.grpc.InternalMetadata;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.homa.HomaSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A server's answers to frames sent by hand: bad bytes, unknown streams, a CANCEL that overtakes its OPEN. */
class RawFramesTest {
    private final AtomicInteger callsStarted = new AtomicInteger();
    private Server server;
    private HomaSocket client;
    private InetSocketAddress to;

    @BeforeEach
    void start() throws Exception {
        // directExecutor: a call starts inside the OPEN's handling, so before its reply.
        server = HomaServerBuilder.forAddress(new InetSocketAddress(Transport.HOST, 0)).directExecutor()
                .addService(ServerInterceptors.intercept(new TestService(), new io.grpc.ServerInterceptor() {
                    @Override
                    public <Q, R> io.grpc.ServerCall.Listener<Q> interceptCall(io.grpc.ServerCall<Q, R> call, Metadata h,
                                                                                io.grpc.ServerCallHandler<Q, R> next) {
                        callsStarted.incrementAndGet();
                        return next.startCall(call, h);
                    }
                })).build().start();
        client = HomaSocket.open(Transport.loopback());
        to = new InetSocketAddress(Transport.HOST, server.getPort());
    }

    @AfterEach
    void stop() throws Exception {
        client.close();
        server.shutdownNow();
        assertTrue(server.awaitTermination(10, TimeUnit.SECONDS));
    }

    private Frame.Reply send(byte[] frame) throws Exception {
        return send(Unpooled.wrappedBuffer(frame));
    }

    /** Sends a frame; the reply's messages are copied out, so that nothing needs releasing. */
    private Frame.Reply send(ByteBuf frame) throws Exception {
        ByteBuf response = client.call(to, frame).get(30, TimeUnit.SECONDS);
        try {
            Frame.Reply reply = Frame.Reply.decode(response);
            List<ByteBuf> copies = reply.messages.stream().map(Unpooled::copiedBuffer).toList();
            reply.release();
            reply.messages.addAll(copies);
            return reply;
        } finally {
            response.release();
        }
    }

    private static ByteBuf unaryOpen(long stream) {
        ByteBuf message = Unpooled.wrappedBuffer(TestService.request("raw").toByteArray());
        return Frame.open(stream, Frame.F_HALF_CLOSE | Frame.F_UNARY, SimpleServiceGrpc.getUnaryRpcMethod().getFullMethodName(),
                "raw", Frame.NO_TIMEOUT, 0, InternalMetadata.serialize(new Metadata()), message);
    }

    @Test
    void badBytesGetBadFrameAndPingGetsAck() throws Exception {
        Frame.Reply bad = send(new byte[] {9, 9, 9});
        assertEquals(Frame.Reply.BAD_FRAME, bad.code);
        assertEquals(Status.Code.INTERNAL, bad.status.getCode());
        byte[] otherVersion = Frame.ping();
        otherVersion[0] = 2;
        assertEquals(Frame.Reply.BAD_FRAME, send(otherVersion).code);
        assertEquals(Frame.Reply.ACK, send(Frame.ping()).code);
    }

    @Test
    void framesOfUnknownStreamsAreRefused() throws Exception {
        assertEquals(Frame.Reply.UNKNOWN_STREAM, send(Frame.message(77, 1, Unpooled.wrappedBuffer(new byte[] {1}))).code);
        assertEquals(Frame.Reply.UNKNOWN_STREAM, send(Frame.credit(77, 1)).code);
    }

    @Test
    void aUnaryCallIsAnsweredInItsOwnResponse() throws Exception {
        Frame.Reply r = send(unaryOpen(5));
        assertEquals(Frame.Reply.RESULT, r.code);
        assertEquals(Status.Code.OK, r.status.getCode());
        assertEquals(TestService.response("raw"), io.grpc.testing.protobuf.SimpleResponse.parseFrom(r.messages.get(0).nioBuffer()));
        assertEquals(1, callsStarted.get());
        // the stream has ended: its id cannot be opened again
        assertEquals(Status.Code.CANCELLED, send(unaryOpen(5)).status.getCode());
        assertEquals(1, callsStarted.get());
    }

    @Test
    void aCancelThatOvertakesItsOpenStopsTheCallBeforeItStarts() throws Exception {
        assertEquals(Frame.Reply.ACK, send(Frame.cancel(6, Status.CANCELLED)).code);
        Frame.Reply r = send(unaryOpen(6));
        assertEquals(Frame.Reply.RESULT, r.code);
        assertEquals(Status.Code.CANCELLED, r.status.getCode());
        assertEquals(0, callsStarted.get(), "the service never saw the call");
    }
}
