package io.homa.bench;

import java.util.List;

/** The transports the benchmarks compare, by name. */
public final class Transports {
    public static final String HOMA = "homa";
    public static final String TCP_SINGLE = "tcp-single";
    public static final String TCP_POOL = "tcp-pool";
    public static final String UDP_RAW = "udp-raw";
    public static final String GRPC = "grpc";
    public static final String GRPC_POOL = "grpc-pool";
    public static final String GRPC_HOMA = "grpc-homa";

    /** The transports {@code compare} runs by default, in the order results are shown. */
    public static final List<String> ALL = List.of(HOMA, TCP_SINGLE, TCP_POOL, UDP_RAW, GRPC, GRPC_HOMA);
    /** Every transport name, in the order results are shown (grpc-pool only on request). */
    public static final List<String> KNOWN = List.of(HOMA, TCP_SINGLE, TCP_POOL, UDP_RAW, GRPC, GRPC_HOMA, GRPC_POOL);

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
            case TCP_SINGLE -> TcpTransport.single();
            case TCP_POOL -> TcpTransport.pool();
            case UDP_RAW -> new UdpTransport();
            case GRPC -> GrpcTransport.single();
            case GRPC_POOL -> GrpcTransport.pool();
            case GRPC_HOMA -> GrpcTransport.overHoma();
            default -> throw new IllegalArgumentException("unknown transport '" + name + "' (known: " + String.join(", ", KNOWN) + ")");
        };
    }
}
