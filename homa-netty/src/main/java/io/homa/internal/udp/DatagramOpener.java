package io.homa.internal.udp;

import io.homa.core.psp.PspDrop;
import io.homa.core.psp.PspFormat;
import io.homa.core.psp.PspOpener;
import io.homa.internal.observe.ShellCounter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.socket.DatagramPacket;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * The receive side of a secured socket, for one event loop: every datagram read is opened
 * ({@link PspOpener}) before anything else looks at it, so nothing unauthenticated reaches the
 * engine, the host SRPT drain or the fallback's bookkeeping. A datagram that GRO coalesced holds
 * several sealed packets back to back; each is opened on its own (its length is in its readable
 * Homa header) and the plaintext packets go on back to back, as one coalesced datagram, into a
 * fresh pooled buffer (the engine may keep slices of it as message memory). A packet that does
 * not open is dropped and counted by its {@link PspDrop} reason; the others of its datagram go on.
 *
 * <p>Buffers: {@link #open} takes ownership of the packet it is given and releases it; it returns
 * a new packet the caller owns, or null. Used under the loop's engine lock.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class DatagramOpener {
    private static final ShellCounter[] COUNTERS = {
            ShellCounter.SECURITY_NOT_SEALED, ShellCounter.SECURITY_BAD_HEADER, ShellCounter.SECURITY_UNKNOWN_KEY,
            ShellCounter.SECURITY_AUTH_FAILED, ShellCounter.SECURITY_REPLAY};

    static {
        for (PspDrop d : PspDrop.values()) {
            if (!COUNTERS[d.ordinal()].name().endsWith(d.name())) {
                throw new AssertionError("counter of " + d);
            }
        }
    }

    private final PspOpener opener;
    private final long[] shell;
    private final ByteBufAllocator alloc;
    /**
     * One sealed packet, on the heap: AES-GCM is fastest from array to array (the JDK's and Amazon
     * Corretto Crypto Provider's alike; both are slower on direct buffers, ACCP several times), so
     * the datagram is copied here (a memcpy) and opened straight into the heap buffer the engine
     * reads.
     */
    private final ByteBuffer sealedOne = ByteBuffer.allocate(65_536);

    /** The mutual-TLS mode's check that an SPI was issued to the sender's address; null with pre-shared keys. */
    private final SenderCheck senders;

    /**
     * @param senders with mutual TLS, whether an SPI this socket issued may come from an address
     *                (a packet that fails it is dropped as SECURITY_WRONG_PEER); null with pre-shared keys
     */
    public DatagramOpener(PspOpener opener, long[] shell, ByteBufAllocator alloc, SenderCheck senders) {
        this.senders = senders;
        this.opener = opener;
        this.shell = shell;
        this.alloc = alloc;
    }

    /** The plaintext of {@code p} (which this releases), or null when none of its packets opened. */
    public DatagramPacket open(DatagramPacket p) {
        try {
            ByteBuf content = p.content();
            int total = content.readableBytes();
            if (total == 0) {
                shell[ShellCounter.SECURITY_NOT_SEALED.ordinal()]++;
                return null;
            }
            ByteBuffer in = content.nioBufferCount() == 1
                    ? content.internalNioBuffer(content.readerIndex(), total) : content.nioBuffer();
            int at = in.position();
            int end = in.limit();
            ByteBuf out = alloc.heapBuffer(total);
            ByteBuffer o = out.internalNioBuffer(0, total);
            int start = o.position();
            int opened = 0;
            while (at < end) {
                int n = PspFormat.sealedLength(in, at, end - at);
                if (n <= 0 || n > end - at) {
                    n = end - at; // not a walkable sealed packet: the rest is refused as one
                }
                if (n > sealedOne.capacity()) { // larger than any UDP datagram: not one packet
                    shell[ShellCounter.SECURITY_BAD_HEADER.ordinal()]++;
                    at += n;
                    continue;
                }
                sealedOne.clear();
                sealedOne.put(0, in, at, n);
                int before = o.position();
                PspDrop refused = opener.open(sealedOne, 0, n, o);
                if (refused == null && senders != null && !senders.allows(sealedOne.getInt(PspFormat.OFF_SPI), p.sender())) {
                    o.position(before); // opened, but under an SPI issued to another address: not used
                    shell[ShellCounter.SECURITY_WRONG_PEER.ordinal()]++;
                } else if (refused == null) {
                    opened++;
                } else {
                    shell[COUNTERS[refused.ordinal()].ordinal()]++;
                }
                at += n;
            }
            if (opened == 0) {
                out.release();
                return null;
            }
            shell[ShellCounter.DATAGRAMS_OPENED.ordinal()] += opened;
            out.writerIndex(o.position() - start);
            return new DatagramPacket(out, p.recipient(), p.sender());
        } finally {
            p.release();
        }
    }

    /** Whether a packet under an SPI this socket issued may come from an address (mutual TLS). */
    @FunctionalInterface
    public interface SenderCheck {
        boolean allows(int spi, InetSocketAddress from);
    }
}
