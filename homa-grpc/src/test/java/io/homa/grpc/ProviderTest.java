package io.homa.grpc;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelProvider;
import io.grpc.NameResolverRegistry;
import io.grpc.Server;
import io.grpc.TlsChannelCredentials;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

import static io.homa.grpc.TestService.request;
import static io.homa.grpc.TestService.response;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code homa://} targets through grpc-java's registries, without taking other targets from HTTP/2. */
class ProviderTest {
    @Test
    void homaTargetsGetAHomaChannel() throws Exception {
        Server server = HomaServerBuilder.forAddress(new InetSocketAddress(Transport.HOST, 0))
                .addService(TestService.definition()).build().start();
        ManagedChannel channel = Grpc.newChannelBuilder("homa://" + Transport.HOST + ":" + server.getPort(),
                InsecureChannelCredentials.create()).build();
        try {
            assertEquals(response("via the registry"), SimpleServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(30, TimeUnit.SECONDS).unaryRpc(request("via the registry")));
            assertEquals(Transport.HOST + ":" + server.getPort(), channel.authority());
        } finally {
            channel.shutdownNow();
            server.shutdownNow();
            assertTrue(channel.awaitTermination(10, TimeUnit.SECONDS));
            assertTrue(server.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void theDefaultProviderStaysHttp2() {
        // ManagedChannelBuilder.forTarget("host:port") takes the highest-priority provider: not ours.
        assertNotEquals(HomaChannelProvider.class, ManagedChannelProvider.provider().getClass());
        // and targets without a scheme are still looked up by DNS
        assertEquals("dns", NameResolverRegistry.getDefaultRegistry().asFactory().getDefaultScheme());
    }

    /** Homa's TLS is mutual: TLS credentials without a client certificate are refused, with one they make a channel. */
    @Test
    void tlsNeedsAClientCertificate() {
        Exception e = assertThrows(Exception.class, () -> Grpc.newChannelBuilder("homa://" + Transport.HOST + ":1",
                TlsChannelCredentials.create()).build());
        assertTrue(e.getMessage().contains("certificate"), e.getMessage());
        assertThrows(UnsupportedOperationException.class, () -> HomaChannelBuilder.forAddress("h", 1).useTransportSecurity());
        io.homa.testing.TestCertificates ca = new io.homa.testing.TestCertificates("provider-test-ca");
        io.grpc.ManagedChannel channel = Grpc.newChannelBuilder("homa://" + Transport.HOST + ":1",
                TlsChannelCredentials.newBuilder().keyManager(ca.issue("CN=provider-test")).trustManager(ca.trustManager())
                        .build()).build();
        assertTrue(channel.shutdownNow().isShutdown());
    }
}
