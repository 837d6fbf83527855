package io.homa;

import io.homa.internal.Addresses;
import io.homa.internal.loop.EngineLoops;
import io.homa.internal.transport.Transport;
import io.homa.core.wire.WireFormat;
import io.netty.channel.Channel;
import io.netty.channel.socket.nio.NioChannelOption;
import io.netty.channel.unix.IntegerUnixChannelOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.channels.DatagramChannel;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * IPv6 end to end: the integration tests of IPv4 (echo sizes, 10,000 concurrent calls, loss) over
 * {@code [::1]}, the traffic class of each priority level, the MTU and header overhead, a
 * dual-stack wildcard socket reached by both families, and IPv4-mapped addresses. Skipped where
 * the machine has no IPv6 loopback.
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class Ipv6Test {
    static final String HOST = "::1";
    /** Linux's IPPROTO_IPV6 and IPV6_TCLASS: read straight from the socket, not through Netty's IP_TOS. */
    private static final IntegerUnixChannelOption IPV6_TCLASS = new IntegerUnixChannelOption("IPV6_TCLASS", 41, 67);
    /** Linux's IPPROTO_IP and IP_TOS: what an IPv6 socket puts on its IPv4(-mapped) datagrams. */
    private static final IntegerUnixChannelOption RAW_IP_TOS = new IntegerUnixChannelOption("IP_TOS", 0, 1);

    @BeforeAll
    static void needIpv6() {
        try (DatagramChannel ch = DatagramChannel.open(StandardProtocolFamily.INET6)) {
            ch.bind(new InetSocketAddress(HOST, 0));
        } catch (IOException | UnsupportedOperationException e) {
            assumeTrue(false, "IPv6 is unavailable here (cannot bind [::1]): " + e);
        }
    }

    private static HomaConfig.Builder v6() {
        return HomaConfig.builder().bindAddress(new InetSocketAddress(HOST, 0));
    }

    private static InetSocketAddress at(String host, HomaSocket s) {
        return new InetSocketAddress(host, s.localAddress().getPort());
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 1400, 65_536, 1 << 20, 29_400_000})
    void echoOverIpv6Loopback(int size) throws Exception {
        try (HomaSocket server = HomaSocket.open(v6().build()); HomaSocket client = HomaSocket.open(v6().build())) {
            server.serve(r -> r.reply(r.toByteArray()));
            byte[] request = new byte[size];
            new Random(size).nextBytes(request);
            assertArrayEquals(request, client.call(at(HOST, server), request).get(60, TimeUnit.SECONDS));
            assertInstanceOf(Inet6Address.class, server.localAddress().getAddress());
            Loopback.assertTransport(server);
            Loopback.awaitIdle(client, server);
        }
    }

    @Test
    void tenThousandConcurrentCallsOverIpv6() throws Exception {
        ConcurrencyTest.run(ConcurrencyTest.patient(HOST).build(), ConcurrencyTest.patient(HOST).build(), HOST);
    }

    @Test
    void tenThousandConcurrentCallsOverIpv6UnderLoss() throws Exception {
        ConcurrencyTest.underFaults(HOST);
    }

    /** The MTU comes from the interface, and segments leave room for the 40-byte IPv6 header. */
    @Test
    void segmentsAreSizedForTheIpv6Header() throws Exception {
        HomaConfig c = v6().build();
        int lo = NetworkInterface.getByInetAddress(InetAddress.getByName(HOST)).getMTU();
        assertEquals(Math.min(lo, 65_535), c.mtu());
        assertEquals(WireFormat.IPV6_UDP_OVERHEAD, c.engineConfig().ipUdpOverhead);
        assertEquals(c.mtu() - 48 - WireFormat.DATA_HEADER, c.engineConfig().segmentPayload());
        HomaConfig wildcard = HomaConfig.builder().bindAddress(new InetSocketAddress("::", 0)).build();
        assertEquals(1_500, wildcard.mtu());
        assertEquals(1_500 - 48 - WireFormat.DATA_HEADER, wildcard.engineConfig().segmentPayload());
    }

    /**
     * Each priority level's socket carries its TOS byte as the IPv6 traffic class. Read back with
     * the raw IPV6_TCLASS option on epoll and io_uring (so Netty's IP_TOS mapping is checked, not trusted), and
     * through the JDK's IP_TOS, which it maps to the traffic class on IPv6 sockets, on NIO.
     */
    @ParameterizedTest
    @ValueSource(strings = {HOST, "::"})
    void priorityLevelsCarryTheirTrafficClass(String bind) {
        HomaConfig c = HomaConfig.builder().bindAddress(new InetSocketAddress(bind, 0)).build();
        try (HomaSocket s = HomaSocket.open(c)) {
            EngineLoops n = Loopback.shellOf(s);
            Loopback.assertTransport(s);
            for (int level = 0; level < WireFormat.PRIORITY_LEVELS; level++) {
                Channel ch = n.channel(0, level);
                if (n.transport().kind != Transport.Kind.NIO) { // epoll and io_uring read raw options alike
                    assertEquals(c.tos(level), ch.config().getOption(IPV6_TCLASS), "IPV6_TCLASS of level " + level);
                    // A dual-stack socket's IPv4 datagrams carry IP_TOS: set as well.
                    assertEquals(c.tos(level), ch.config().getOption(RAW_IP_TOS), "IP_TOS of level " + level);
                } else {
                    assertEquals(c.tos(level), ch.config().getOption(NioChannelOption.of(StandardSocketOptions.IP_TOS)),
                            "IP_TOS (the JDK's traffic class on IPv6) of level " + level);
                }
            }
        }
    }

    /**
     * A socket bound to {@code [::]} answers IPv6 and IPv4 callers on one port; it sees an IPv4
     * caller as an IPv4 address. A call to an IPv4-mapped IPv6 address goes to the IPv4 peer (one
     * peer, whichever way it is named). All sockets use MTU 1,500 (peers must agree on it).
     */
    @Test
    void dualStackWildcardIsReachedByBothFamilies() throws Exception {
        HomaConfig.Builder mtu = HomaConfig.builder().mtu(1_500);
        Set<InetSocketAddress> peers = ConcurrentHashMap.newKeySet();
        try (HomaSocket server = HomaSocket.open(mtu.bindAddress(new InetSocketAddress("::", 0)).build());
             HomaSocket v6 = HomaSocket.open(mtu.bindAddress(new InetSocketAddress(HOST, 0)).build());
             HomaSocket v4 = HomaSocket.open(mtu.bindAddress(new InetSocketAddress(Loopback.HOST, 0)).build());
             HomaSocket dual = HomaSocket.open(mtu.bindAddress(new InetSocketAddress("::", 0)).build())) {
            server.serve(r -> {
                peers.add(r.peer());
                r.reply(r.toByteArray());
            });
            byte[] request = new byte[100_000];
            new Random(6).nextBytes(request);
            assertArrayEquals(request, v6.call(at(HOST, server), request).get(30, TimeUnit.SECONDS));
            assertArrayEquals(request, v4.call(at(Loopback.HOST, server), request).get(30, TimeUnit.SECONDS));
            byte[] mapped = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, 127, 0, 0, 1};
            InetSocketAddress viaMapped = new InetSocketAddress(Inet6Address.getByAddress(null, mapped, -1),
                    server.localAddress().getPort());
            assertInstanceOf(Inet6Address.class, viaMapped.getAddress());
            assertArrayEquals(request, dual.call(viaMapped, request).get(30, TimeUnit.SECONDS));
            assertArrayEquals(request, dual.call(at(Loopback.HOST, server), request).get(30, TimeUnit.SECONDS));
            assertEquals(Set.of(new InetSocketAddress(HOST, v6.localAddress().getPort()),
                    new InetSocketAddress(Loopback.HOST, v4.localAddress().getPort()),
                    new InetSocketAddress(Loopback.HOST, dual.localAddress().getPort())), peers);
            for (InetSocketAddress p : peers) {
                if (p.getPort() != v6.localAddress().getPort()) {
                    assertInstanceOf(Inet4Address.class, p.getAddress(), "an IPv4 caller is seen as IPv4: " + p);
                }
            }
            Loopback.awaitIdle(server, v6, v4, dual);
        }
    }

    @Test
    void ipv4MappedAddressesAreNormalised() throws Exception {
        byte[] mapped = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, 10, 1, 2, 3};
        InetSocketAddress a = new InetSocketAddress(Inet6Address.getByAddress(null, mapped, -1), 7);
        assertEquals(new InetSocketAddress("10.1.2.3", 7), Addresses.normalise(a));
        InetSocketAddress v6 = new InetSocketAddress(HOST, 7);
        assertTrue(Addresses.normalise(v6) == v6, "a real IPv6 address stays as it is");
    }

    /** A socket bound to an IPv4 address cannot send to IPv6, and one bound to [::1] not to IPv4: said at once. */
    @Test
    void aCallAcrossFamiliesFailsAtOnceWithAReason() {
        try (HomaSocket v4 = HomaSocket.open(Loopback.config().build()); HomaSocket v6 = HomaSocket.open(v6().build())) {
            HomaBadArgumentException e = assertThrows(HomaBadArgumentException.class,
                    () -> v4.call(at(HOST, v6), new byte[1]));
            assertTrue(e.getMessage().contains("bind [::]"), e.getMessage());
            assertThrows(HomaBadArgumentException.class, () -> v6.call(at(Loopback.HOST, v4), new byte[1]));
        }
    }
}
