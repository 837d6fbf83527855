package io.homa.bench;

import io.homa.HomaConfig;

import java.util.List;

/** The transports the benchmarks compare, by name. */
public final class Transports {
    public static final String HOMA = "homa";
    /** Homa with two event loops (engines) per socket; throughput scenarios only. */
    public static final String HOMA_2LOOPS = "homa-2loops";
    /** Homa with two client sockets per client (calls round-robin); throughput scenarios only, on request. */
    public static final String HOMA_2CLIENTS = "homa-2clients";
    /** Homa on one named Netty transport, to compare them side by side (not run by default). */
    public static final String HOMA_EPOLL = "homa-epoll";
    public static final String HOMA_IOURING = "homa-iouring";
    public static final String HOMA_NIO = "homa-nio";
    /** Homa with every datagram sealed (the security layer, pre-shared keys); on request. */
    public static final String HOMA_PSP = "homa-psp";
    /** The same with Amazon Corretto Crypto Provider's AES-GCM (HomaSecurity.cipherProvider); on request. */
    public static final String HOMA_PSP_ACCP = "homa-psp-accp";
    public static final String TCP_SINGLE = "tcp-single";
    public static final String TCP_POOL = "tcp-pool";
    public static final String UDP_RAW = "udp-raw";
    /** {@code java.net.Socket}, blocking, a thread per connection: what a user would write. */
    public static final String TCP_BLOCKING = "tcp-blocking";
    /** A raw non-blocking DatagramChannel ping-pong that spins on both sides: the busy-poll floor. */
    public static final String UDP_SPIN = "udp-spin";
    public static final String GRPC = "grpc";
    public static final String GRPC_POOL = "grpc-pool";
    public static final String GRPC_HOMA = "grpc-homa";
    /** grpc over HTTP/2 with grpc-java's default executors (what most services run). */
    public static final String GRPC_DEFAULT = "grpc-default";
    /** grpc over Homa with grpc-java's default executors. */
    public static final String GRPC_HOMA_DEFAULT = "grpc-homa-default";
    /**
     * grpc over Homa with {@code directExecutor()} and the sockets' inline execution on both sides:
     * the service and the client's callbacks on the sockets' event loops, as grpc-netty runs them
     * under {@code directExecutor()} (for code that never blocks); on request.
     */
    public static final String GRPC_HOMA_INLINE = "grpc-homa-inline";

    /** The transports {@code compare} runs by default, in the order results are shown. */
    public static final List<String> ALL = List.of(HOMA, HOMA_2LOOPS, TCP_SINGLE, TCP_POOL, UDP_RAW, GRPC, GRPC_HOMA,
            GRPC_DEFAULT, GRPC_HOMA_DEFAULT);
    /**
     * Every transport name, in the order results are shown (grpc-pool, grpc-homa-inline,
     * tcp-blocking, udp-spin, homa-2clients and Homa on a named Netty transport only on request).
     */
    public static final List<String> KNOWN = List.of(HOMA, HOMA_2LOOPS, HOMA_2CLIENTS, HOMA_EPOLL, HOMA_IOURING, HOMA_NIO, HOMA_PSP, HOMA_PSP_ACCP, TCP_SINGLE,
            TCP_POOL, TCP_BLOCKING, UDP_RAW, UDP_SPIN, GRPC, GRPC_HOMA, GRPC_HOMA_INLINE, GRPC_DEFAULT, GRPC_HOMA_DEFAULT, GRPC_POOL);

    private Transports() {
    }

    /**
     * The transport called {@code name}.
     *
     * @throws IllegalArgumentException if there is none
     */
    public static Transport create(String name) {
        return switch (name) {
            case HOMA -> new HomaTransport();
            case HOMA_2LOOPS -> HomaTransport.twoLoops();
            case HOMA_2CLIENTS -> HomaTransport.twoClientSockets();
            case HOMA_EPOLL -> HomaTransport.on(HOMA_EPOLL, HomaConfig.IoTransport.EPOLL);
            case HOMA_IOURING -> HomaTransport.on(HOMA_IOURING, HomaConfig.IoTransport.IO_URING);
            case HOMA_NIO -> HomaTransport.on(HOMA_NIO, HomaConfig.IoTransport.NIO);
            case HOMA_PSP -> HomaTransport.secured();
            case HOMA_PSP_ACCP -> HomaTransport.securedWithAccp();
            case TCP_SINGLE -> TcpTransport.single();
            case TCP_POOL -> TcpTransport.pool();
            case UDP_RAW -> new UdpTransport();
            case TCP_BLOCKING -> new TcpBlockingTransport();
            case UDP_SPIN -> new UdpSpinTransport();
            case GRPC -> GrpcTransport.single();
            case GRPC_POOL -> GrpcTransport.pool();
            case GRPC_HOMA -> GrpcTransport.overHoma();
            case GRPC_DEFAULT -> GrpcTransport.singleDefaultExecutors();
            case GRPC_HOMA_DEFAULT -> GrpcTransport.overHomaDefaultExecutors();
            case GRPC_HOMA_INLINE -> GrpcTransport.overHomaInline();
            default -> throw new IllegalArgumentException("unknown transport '" + name + "' (known: " + String.join(", ", KNOWN) + ")");
        };
    }
}
