package io.homa.internal.udp;

import io.homa.core.psp.PspFormat;
import io.homa.core.psp.PspMasterKeys;
import io.homa.core.psp.PspOpener;
import io.homa.core.psp.PspReceiveState;
import io.homa.core.psp.PspSealer;
import io.homa.core.psp.PspSendKey;
import io.homa.core.wire.PacketType;
import io.homa.core.wire.WireFormat;
import io.homa.internal.observe.ShellCounter;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.socket.DatagramPacket;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The receive side of the mutual-TLS mode: a packet that authenticates under an SPI issued to one
 * address but comes from another is dropped as SECURITY_WRONG_PEER (a peer passing its packets
 * off as another's), the same packet from its own address opens.
 */
@org.junit.jupiter.api.extension.ExtendWith(io.homa.LeakCheck.class)
class DatagramOpenerTest {
    private static final InetSocketAddress HERE = new InetSocketAddress("10.0.0.9", 4000);
    private static final InetSocketAddress PEER = new InetSocketAddress("10.0.0.1", 4000);
    private static final InetSocketAddress OTHER = new InetSocketAddress("10.0.0.1", 4001);

    @Test
    void aPacketFromAnotherAddressThanItsSpisIsDroppedAsWrongPeer() {
        byte[] master = new byte[32];
        new Random(9).nextBytes(master);
        PspMasterKeys ours = new PspMasterKeys(PspFormat.VERSION_GCM_128, master);
        PspMasterKeys.SendKey issued = ours.issue(new Random(1));
        PspSendKey key = new PspSendKey(issued.spi(), issued.key());
        long[] shell = new long[ShellCounter.values().length];
        DatagramOpener opener = new DatagramOpener(new PspOpener(new PspReceiveState(ours)), shell,
                ByteBufAllocator.DEFAULT, (spi, from) -> spi == issued.spi() && from.equals(PEER));
        PspSealer sealer = new PspSealer();

        assertNull(opener.open(new DatagramPacket(Unpooled.wrappedBuffer(sealed(sealer, key)), HERE, OTHER)));
        assertEquals(1, shell[ShellCounter.SECURITY_WRONG_PEER.ordinal()]);
        assertEquals(0, shell[ShellCounter.DATAGRAMS_OPENED.ordinal()]);

        DatagramPacket opened = opener.open(new DatagramPacket(Unpooled.wrappedBuffer(sealed(sealer, key)), HERE, PEER));
        assertNotNull(opened);
        try {
            assertEquals(WireFormat.GRANT_LENGTH, opened.content().readableBytes());
            assertEquals(1, shell[ShellCounter.DATAGRAMS_OPENED.ordinal()]);
            assertEquals(1, shell[ShellCounter.SECURITY_WRONG_PEER.ordinal()]);
        } finally {
            opened.release();
        }
    }

    private static ByteBuffer sealed(PspSealer sealer, PspSendKey key) {
        ByteBuffer packet = ByteBuffer.allocate(WireFormat.GRANT_LENGTH);
        packet.putShort(WireFormat.OFF_MAGIC, (short) WireFormat.MAGIC);
        packet.put(WireFormat.OFF_VERSION, (byte) WireFormat.VERSION);
        packet.put(WireFormat.OFF_TYPE, (byte) PacketType.GRANT.code);
        ByteBuffer out = ByteBuffer.allocate(packet.capacity() + PspFormat.OVERHEAD);
        sealer.seal(key, PspFormat.VERSION_GCM_128, packet, 0, packet.capacity(), out);
        return out.flip();
    }
}
