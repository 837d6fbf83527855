package io.homa.internal;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The MTU a socket takes from its bind interface (the rest of the derivation: HomaConfigDefaultsTest). */
@org.junit.jupiter.api.extension.ExtendWith(io.homa.LeakCheck.class)
class DerivedProtocolTest {
    @Test
    void theWildcardAddress_getsEthernetsMtu() {
        assertEquals(1_500, DerivedProtocol.interfaceMtu(new InetSocketAddress("0.0.0.0", 0)));
        assertEquals(1_500, DerivedProtocol.interfaceMtu(new InetSocketAddress("::", 0)));
    }

    @Test
    void loopback_getsItsInterfacesMtu_cappedAtTheLargestDatagram() throws Exception {
        InetAddress lo = InetAddress.getByName("127.0.0.1");
        NetworkInterface ni = NetworkInterface.getByInetAddress(lo);
        int expected = ni == null || ni.getMTU() < 576 ? 1_500 : Math.min(ni.getMTU(), 65_535);
        assertEquals(expected, DerivedProtocol.interfaceMtu(new InetSocketAddress(lo, 0)));
    }
}
