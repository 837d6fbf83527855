package io.homa.internal.udp;

import io.netty.channel.Channel;
import io.netty.channel.unix.Socket;
import io.netty.channel.unix.UnixChannel;

import java.util.List;

/**
 * The sockets under a loop's native channels, for system calls from a thread other than the
 * loop's ({@link DatagramWriter}'s direct route, {@link DirectReader}): each wraps the channel's
 * own file descriptor again and is never closed through this object (the channel owns it).
 */
final class NativeSockets {
    private NativeSockets() {
    }

    /** A socket per channel, in order, or null when one of them is not native (NIO). */
    static Socket[] of(List<Channel> channels) {
        Socket[] sockets = new Socket[channels.size()];
        for (int i = 0; i < sockets.length; i++) {
            if (!(channels.get(i) instanceof UnixChannel u)) {
                return null;
            }
            sockets[i] = new Socket(u.fd().intValue());
        }
        return sockets;
    }
}
