package io.homa.internal;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/**
 * One peer is one address. A dual-stack socket (bound to {@code [::]}) sees IPv4 peers as
 * IPv4-mapped IPv6 addresses ({@code ::ffff:a.b.c.d}); Netty and the JDK report those as plain
 * IPv4 addresses, but an application can still make an {@link Inet6Address} holding one
 * ({@code Inet6Address.getByAddress}). The engine keys peers by address, so a call to such an
 * address would never match the IPv4 sender of its response: every address that enters the
 * socket goes through {@link #normalise} first.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class Addresses {
    private Addresses() {
    }

    /** {@code a} with an IPv4-mapped IPv6 address replaced by the IPv4 address; else {@code a} itself. */
    public static InetSocketAddress normalise(InetSocketAddress a) {
        if (a == null || a.isUnresolved() || !(a.getAddress() instanceof Inet6Address v6)) {
            return a;
        }
        byte[] b = v6.getAddress();
        for (int i = 0; i < 10; i++) {
            if (b[i] != 0) {
                return a;
            }
        }
        if (b[10] != (byte) 0xff || b[11] != (byte) 0xff) {
            return a;
        }
        try {
            return new InetSocketAddress(InetAddress.getByAddress(new byte[]{b[12], b[13], b[14], b[15]}), a.getPort());
        } catch (UnknownHostException e) {
            throw new AssertionError("4 bytes are an IPv4 address", e);
        }
    }

    /**
     * Why a socket bound to {@code local} cannot send to {@code peer}, or null if it can: a
     * socket bound to an IPv4 address has no way to IPv6 peers, one bound to a specific IPv6
     * address none to IPv4 peers (bind {@code [::]} to reach both families).
     */
    public static String unreachable(InetSocketAddress local, InetSocketAddress peer) {
        if (local.getAddress() instanceof Inet4Address && peer.getAddress() instanceof Inet6Address) {
            return "the socket is bound to the IPv4 address " + local.getAddress().getHostAddress()
                    + " and cannot reach the IPv6 address " + peer.getAddress().getHostAddress()
                    + " (bind [::] to reach both families, or an IPv6 address)";
        }
        if (local.getAddress() instanceof Inet6Address && !local.getAddress().isAnyLocalAddress()
                && peer.getAddress() instanceof Inet4Address) {
            return "the socket is bound to the IPv6 address " + local.getAddress().getHostAddress()
                    + " and cannot reach the IPv4 address " + peer.getAddress().getHostAddress()
                    + " (bind [::] to reach both families)";
        }
        return null;
    }
}
