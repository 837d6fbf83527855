package io.homa.internal.loop;

import io.homa.core.wire.WireFormat;
import io.homa.internal.ShellConfig;
import io.homa.internal.transport.TcpListener;
import io.homa.internal.transport.Transport;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Binds the UDP channels of one socket, all on one port: for each event loop one channel per
 * distinct IP TOS of the priority levels (or one in all without priority sockets). The first
 * channel picks the port; with the TCP fallback the port must be free for TCP as well. On the
 * opening thread, before any channel reads.
 */
final class PortBinding {
    private static final Logger log = LoggerFactory.getLogger(PortBinding.class);
    /** Binds attempts when the port is free for UDP but not for TCP (or the other way round). */
    private static final int PORT_ATTEMPTS = 16;

    private final ShellConfig config;
    private final Transport transport;
    private final EventLoopGroup group;
    /** What listens on TCP at the port (the fallback's server, a secured socket's key exchange), or null. */
    private final TcpListener tcpServer;
    private InetSocketAddress localAddress;

    PortBinding(ShellConfig config, Transport transport, EventLoopGroup group, TcpListener tcpServer) {
        this.config = config;
        this.transport = transport;
        this.group = group;
        this.tcpServer = tcpServer;
    }

    /** Binds the channels of every loop; the result is by loop, then by priority level (levels may share one). */
    Channel[][] bind(EngineLoop[] loops) {
        boolean shared = loops.length > 1 || (config.prioritySockets() && distinctTos() > 1);
        int port = 0;
        Channel[][] byLevel = new Channel[loops.length][WireFormat.PRIORITY_LEVELS];
        for (int i = 0; i < loops.length; i++) {
            Map<Integer, Channel> byTos = new HashMap<>();
            for (int level = 0; level < WireFormat.PRIORITY_LEVELS; level++) {
                int tos = config.prioritySockets() ? config.tos(level) : -1;
                Channel ch = byTos.get(tos);
                if (ch == null) {
                    ch = port == 0 ? bindFirst(loops[i], shared, tos)
                            : transport.bind(loops[i].loop, config.bindAddress(), port, shared, tos, loops[i].newInbound());
                    if (port == 0) {
                        localAddress = Transport.localAddress(ch);
                        port = localAddress.getPort();
                    }
                    byTos.put(tos, ch);
                }
                byLevel[i][level] = ch;
            }
        }
        return byLevel;
    }

    /** The bound address, with the real port (after {@link #bind}). */
    InetSocketAddress localAddress() {
        return localAddress;
    }

    /** UDP sockets per event loop. */
    int socketsPerLoop() {
        return config.prioritySockets() ? distinctTos() : 1;
    }

    /**
     * Binds the first UDP channel. With a TCP listener (the fallback, a key exchange) the port must
     * be free for both protocols: the TCP listener binds first (picking the port when the configuration says 0), then UDP joins
     * its port number; when that is taken, both try again on another port.
     */
    private Channel bindFirst(EngineLoop loop, boolean shared, int tos) {
        if (tcpServer == null) {
            return transport.bind(loop.loop, config.bindAddress(), 0, shared, tos, loop.newInbound());
        }
        InetSocketAddress want = config.bindAddress();
        for (int attempt = 1; ; attempt++) {
            Channel listener = tcpServer.bind(group, transport, want);
            InetSocketAddress at = (InetSocketAddress) listener.localAddress();
            try {
                return transport.bind(loop.loop, new InetSocketAddress(want.getAddress(), at.getPort()), 0, shared, tos,
                        loop.newInbound());
            } catch (RuntimeException e) {
                listener.close().awaitUninterruptibly();
                if (want.getPort() != 0 || attempt == PORT_ATTEMPTS) {
                    throw e;
                }
                log.debug("port {} is free for TCP but not for UDP; trying another", at.getPort());
            }
        }
    }

    private int distinctTos() {
        Set<Integer> s = new HashSet<>();
        for (int level = 0; level < WireFormat.PRIORITY_LEVELS; level++) {
            s.add(config.tos(level));
        }
        return s.size();
    }
}
