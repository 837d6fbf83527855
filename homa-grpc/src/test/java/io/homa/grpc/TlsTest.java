package io.homa.grpc;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.ForwardingClientCall;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.SecurityLevel;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.testing.protobuf.SimpleServiceGrpc;
import io.homa.HomaBadArgumentException;
import io.homa.testing.TestCertificates;
import org.junit.jupiter.api.Test;

import javax.net.ssl.SSLSession;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static io.homa.grpc.TestService.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * gRPC over Homa with grpc-java's TLS credentials: {@link TlsServerCredentials} and
 * {@link TlsChannelCredentials} make both sockets mutual-TLS ones; the server's calls see the
 * client's TLS session and the client's calls the server's, as over grpc-netty; an untrusted
 * client gets UNAVAILABLE and runs no service method; credentials Homa cannot honour are refused.
 */
class TlsTest {
    private static final TestCertificates CA = new TestCertificates("homa-grpc-test-ca");
    private static final String SERVER = "CN=greeter,O=homa-test";
    private static final String CLIENT = "CN=caller,O=homa-test";

    private static TlsServerCredentials serverCredentials() {
        return (TlsServerCredentials) TlsServerCredentials.newBuilder().keyManager(CA.issue(SERVER))
                .trustManager(CA.trustManager()).clientAuth(TlsServerCredentials.ClientAuth.REQUIRE).build();
    }

    private static Server start(ServerInterceptor spy) throws Exception {
        return HomaServerBuilder.forPort(0, serverCredentials())
                .addService(ServerInterceptors.intercept(TestService.definition(), spy)).build().start();
    }

    @Test
    void callsRunOverMutualTlsAndBothSidesSeeTheOthersSession() throws Exception {
        AtomicReference<SSLSession> serverSaw = new AtomicReference<>();
        AtomicReference<SecurityLevel> level = new AtomicReference<>();
        ServerInterceptor spy = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                                ServerCallHandler<Q, R> next) {
                serverSaw.set(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION));
                level.set(call.getSecurityLevel());
                return next.startCall(call, headers);
            }
        };
        Server server = start(spy);
        ManagedChannel channel = HomaChannelBuilder.forAddress(Transport.HOST, server.getPort(),
                TlsChannelCredentials.newBuilder().keyManager(CA.issue(CLIENT)).trustManager(CA.trustManager()).build())
                .build();
        AtomicReference<ClientCall<?, ?>> lastCall = new AtomicReference<>();
        Channel spied = ClientInterceptors.intercept(channel, new ClientInterceptor() {
            @Override
            public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> m, CallOptions o, Channel next) {
                ClientCall<Q, R> c = next.newCall(m, o);
                lastCall.set(c);
                return new ForwardingClientCall.SimpleForwardingClientCall<>(c) { };
            }
        });
        try {
            SimpleServiceGrpc.SimpleServiceBlockingStub stub = SimpleServiceGrpc.newBlockingStub(spied)
                    .withDeadlineAfter(30, TimeUnit.SECONDS);
            assertEquals("hello", stub.unaryRpc(request("hello")).getResponseMessage());
            java.util.List<Integer> sizes = new java.util.ArrayList<>();
            stub.serverStreamingRpc(request("10,20000,300000"))
                    .forEachRemaining(r -> sizes.add(r.getResponseMessage().length()));
            assertEquals(java.util.List.of(10, 20_000, 300_000), sizes, "streamed messages");
            SSLSession s = serverSaw.get();
            assertNotNull(s, "the server call's attributes carry the TLS session");
            assertEquals(CLIENT, s.getPeerPrincipal().getName());
            assertEquals("TLSv1.3", s.getProtocol());
            assertEquals(SecurityLevel.PRIVACY_AND_INTEGRITY, level.get());
            SSLSession c = lastCall.get().getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
            assertNotNull(c, "the client call's attributes carry the TLS session");
            assertEquals(SERVER, c.getPeerPrincipal().getName());
        } finally {
            channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void anUntrustedClientGetsUnavailableAndRunsNothing() throws Exception {
        AtomicInteger started = new AtomicInteger();
        ServerInterceptor count = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                                ServerCallHandler<Q, R> next) {
                started.incrementAndGet();
                return next.startCall(call, headers);
            }
        };
        Server server = start(count);
        TestCertificates stranger = new TestCertificates("not-the-ca");
        ManagedChannel channel = HomaChannelBuilder.forAddress(Transport.HOST, server.getPort(),
                TlsChannelCredentials.newBuilder().keyManager(stranger.issue(CLIENT)).trustManager(CA.trustManager())
                        .build()).build();
        try {
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> SimpleServiceGrpc
                    .newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS).unaryRpc(request("let me in")));
            assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.getStatus().toString());
            assertEquals(0, started.get(), "no service method ran");
        } finally {
            channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void credentialsHomaCannotHonourAreRefused() {
        HomaBadArgumentException noClientAuth = assertThrows(HomaBadArgumentException.class,
                () -> HomaServerBuilder.forPort(0, TlsServerCredentials.newBuilder().keyManager(CA.issue(SERVER))
                        .trustManager(CA.trustManager()).build()));
        assertTrue(noClientAuth.getMessage().contains("REQUIRE"), noClientAuth.getMessage());
        HomaBadArgumentException noCertificate = assertThrows(HomaBadArgumentException.class,
                () -> HomaChannelBuilder.forAddress(Transport.HOST, 1,
                        TlsChannelCredentials.newBuilder().trustManager(CA.trustManager()).build()));
        assertTrue(noCertificate.getMessage().contains("certificate"), noCertificate.getMessage());
        assertThrows(HomaBadArgumentException.class, () -> HomaChannelBuilder.forAddress(Transport.HOST, 1, null));
        assertThrows(UnsupportedOperationException.class,
                () -> HomaChannelBuilder.forAddress(Transport.HOST, 1).useTransportSecurity());
        // Insecure credentials are plaintext, as before.
        ManagedChannel plain = HomaChannelBuilder.forAddress(Transport.HOST, 1, InsecureChannelCredentials.create()).build();
        assertTrue(plain.shutdownNow().isShutdown());
    }
}
