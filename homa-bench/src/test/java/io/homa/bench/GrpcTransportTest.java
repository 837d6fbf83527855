package io.homa.bench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayInputStream;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.homa.bench.TcpTransportTest.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GrpcTransportTest {
    @ParameterizedTest
    @ValueSource(strings = {"grpc", "grpc-pool", "grpc-homa"})
    void echo__everySize_oneAtATime(String transport) throws Exception {
        TcpTransportTest.echoesEverySizeOneAtATime(transport);
    }

    @ParameterizedTest
    @ValueSource(strings = {"grpc", "grpc-pool", "grpc-homa"})
    void echo__everySize_allAtOnce(String transport) throws Exception {
        TcpTransportTest.echoesEverySizeAllAtOnce(transport);
    }

    @Test
    void marshaller__roundTripsBytes_withAndWithoutAKnownLength() {
        GrpcTransport.BytesMarshaller m = new GrpcTransport.BytesMarshaller();
        byte[] b = random(1000, 7);
        assertArrayEquals(b, m.parse(m.stream(b)));
        assertArrayEquals(b, m.parse(new ByteArrayInputStream(b)));
    }

    @Test
    void tooLongRequest__isRefused_andCloseFailsLaterCalls() {
        EchoPair pair = EchoPair.open("grpc");
        EchoClient client = pair.client();
        assertThrows(IllegalArgumentException.class, () -> client.call(new byte[GrpcTransport.MAX_MESSAGE + 1]));
        pair.close();
        ExecutionException e = assertThrows(ExecutionException.class, () -> client.call(new byte[1]).get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause() != null);
    }

    @Test
    void connect__toNoServer_fails() throws Exception {
        InetSocketAddress nowhere;
        try (EchoServer s = GrpcTransport.single().startServer()) {
            nowhere = s.address();
        }
        assertThrows(IllegalStateException.class, () -> GrpcTransport.single().connect(nowhere));
    }
}
