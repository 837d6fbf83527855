/**
 * Homa on Netty. Applications see package {@code io.homa} (the API) and, for their tests,
 * {@code io.homa.testing} (fault injection, test certificates); the engine (module {@code io.homa.core}) and
 * {@code io.homa.internal} stay hidden.
 */
module io.homa {
    requires io.homa.core;
    // ByteBuf is part of the API (zero-copy calls and payloads).
    requires transitive io.netty.buffer;
    requires io.netty.common;
    // LengthFieldBasedFrameDecoder, for the TCP fallback's frames.
    requires io.netty.codec;
    // SslHandler, for the mutual-TLS key exchange (the JDK's SSLEngine underneath).
    requires io.netty.handler;
    requires io.netty.transport;
    requires io.netty.transport.classes.epoll;
    requires io.netty.transport.classes.io_uring;
    requires io.netty.transport.unix.common;
    requires org.slf4j;
    // HomaJmx: the socket's MBean.
    requires java.management;
    // JfrEvents: Flight Recorder events.
    requires jdk.jfr;

    exports io.homa;
    exports io.homa.testing;
}
