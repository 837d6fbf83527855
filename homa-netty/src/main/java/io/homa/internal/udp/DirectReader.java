package io.homa.internal.udp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.unix.DatagramSocketAddress;
import io.netty.channel.unix.Socket;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Reads a datagram from one of a loop's sockets with a {@code recvfrom} on the channel's socket,
 * past Netty's read: a caller waiting for its response reads it itself ({@code HomaConfig.callerSpin},
 * {@code callerReads}), and the loop reads a lone datagram itself while its engine is nearly idle.
 * Netty's read may read the same socket at the same time; each datagram goes to exactly one of
 * them (the kernel's socket queue), and the loop's level-triggered epoll still reports every
 * datagram left. Native channels only ({@link #of}). Used by one thread at a time (it keeps one
 * spare buffer): under the loop's engine lock, or by the one waiting caller for a reader of its own.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class DirectReader {
    private final Socket[] sockets;
    private final InetSocketAddress[] local;
    private final ByteBufAllocator alloc;
    /** Room for the largest datagram this socket may be handed (a coalesced GRO one included). */
    private final int datagramBytes;
    /** The buffer the next read goes into; handed on with the datagram read into it. */
    private ByteBuf spare;

    private DirectReader(Socket[] sockets, InetSocketAddress[] local, ByteBufAllocator alloc, int datagramBytes) {
        this.sockets = sockets;
        this.local = local;
        this.alloc = alloc;
        this.datagramBytes = datagramBytes;
    }

    /** A reader of {@code channels}' sockets, or null when one of them is not native (NIO). */
    public static DirectReader of(List<Channel> channels, int datagramBytes) {
        Socket[] sockets = NativeSockets.of(channels);
        if (sockets == null) {
            return null;
        }
        InetSocketAddress[] local = new InetSocketAddress[sockets.length];
        for (int i = 0; i < sockets.length; i++) {
            local[i] = (InetSocketAddress) channels.get(i).localAddress();
        }
        return new DirectReader(sockets, local, channels.get(0).alloc(), datagramBytes);
    }

    /** How many sockets there are to read ({@link #read}'s index). */
    public int sockets() {
        return sockets.length;
    }

    /**
     * The next datagram waiting on socket {@code i} (the caller owns it), or null if none is there
     * (or reading failed: the loop's own read then meets the error).
     */
    public DatagramPacket read(int i) {
        if (spare == null) {
            spare = alloc.directBuffer(datagramBytes, datagramBytes);
        }
        DatagramSocketAddress from;
        try {
            if (spare.hasMemoryAddress()) { // the pooled direct buffer's address: no NIO view per read
                from = sockets[i].recvFromAddress(spare.memoryAddress(), 0, datagramBytes);
            } else {
                ByteBuffer nio = spare.internalNioBuffer(0, datagramBytes);
                from = sockets[i].recvFrom(nio, nio.position(), nio.limit());
            }
        } catch (IOException e) {
            return null;
        }
        if (from == null) {
            return null;
        }
        ByteBuf content = spare.writerIndex(from.receivedAmount());
        spare = null;
        return new DatagramPacket(content, local[i], from);
    }

    /** Releases the spare buffer (on close). */
    public void close() {
        if (spare != null) {
            spare.release();
            spare = null;
        }
    }
}
