package io.homa.internal.transport;

import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;

import java.net.InetSocketAddress;

/**
 * What listens on TCP at a Homa socket's port number: the TCP fallback's server, or a secured
 * socket's key exchange. The port binding binds it first and the UDP sockets join its port.
 * Internal use only.
 */
public interface TcpListener {
    /**
     * Listens on {@code address} (port 0: any free port).
     *
     * @throws RuntimeException the API's IO_ERROR if the port cannot be bound
     */
    Channel bind(EventLoopGroup group, Transport transport, InetSocketAddress address);
}
