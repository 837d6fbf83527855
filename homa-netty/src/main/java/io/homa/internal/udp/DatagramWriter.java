package io.homa.internal.udp;

import io.homa.internal.observe.ShellCounter;
import io.homa.internal.transport.Transport;
import io.homa.core.Transmit;
import io.homa.core.psp.PspFormat;
import io.homa.core.psp.PspSealer;
import io.homa.core.psp.PspSendKey;
import io.homa.core.wire.WireFormat;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.socket.DatagramPacket;
import io.netty.channel.unix.SegmentedDatagramPacket;
import io.netty.channel.unix.Socket;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The send path of one event loop. The engine writes datagrams straight into direct memory
 * ({@link #reserve()}, from the {@link SendArena}); each {@link Transmit} then leaves as a slice of it, on the channel of its
 * priority level: as one GSO send ({@link SegmentedDatagramPacket}) when it has several segments
 * and GSO is on, else as one {@link DatagramPacket} per segment. Writes are not flushed one by one:
 * {@link #flush()} at the end of a batch hands them all to the kernel (sendmmsg with epoll).
 * With fault injection on, each segment goes alone and may be dropped, duplicated or delayed.
 *
 * <p>Batches across messages: datagrams of one segment that the loop writes one after another to
 * the same peer on the same channel, all of one size (the last may be shorter), leave as one GSO
 * send, however many messages they belong to: 64 responses of 100 B written in one turn are one
 * datagram for the kernel's send path, which splits it (and the peer's GRO may keep it whole). Such
 * a run lives in one arena buffer, back to back, so it is one slice and no copy. It is only what is
 * already there: a run is written out when the next datagram cannot join it, on {@link #flush()}
 * (the end of the turn) or at the flush threshold, never held to wait for more. With GSO off each
 * datagram is a packet of its own; either way a flush is one {@code sendmmsg} per channel
 * ({@code SEND_CALLS} counts them).
 *
 * <p>Zero-copy send ({@code HomaConfig.zeroCopySend()}): for a transmit the engine made
 * {@linkplain Transmit#payloadByReference() by reference}, the buffer holds only the headers, and
 * each datagram is a {@link CompositeByteBuf} of a header slice and a retained slice of the
 * caller's payload buffer (a GSO send one composite of all of them, header, payload, header, ...).
 * Epoll hands a composite of direct buffers to the kernel as an iovec, so no payload byte is copied
 * in this process; the slices keep the caller's buffer alive until Netty has sent them.
 *
 * <p>The direct route: on a thread other than the loop's (a caller's own turn of the engine, see
 * EngineLoop), a datagram that is one plain buffer goes to the kernel at once, by a {@code sendto}
 * on the channel's socket, because Netty's {@code Channel.write} from outside the loop would queue
 * a task for the loop and wake it. UDP sockets take concurrent system calls; datagrams need no
 * order. What the route does not take (a GSO send, a composite, a full socket buffer: EAGAIN) goes
 * through Netty as usual. Native channels only ({@link #sendsDirectly()}).
 *
 * <p>Sealing (a secured socket, {@code HomaConfig.Builder.security}): the engine writes its plaintext
 * into a heap scratch buffer of this writer instead ({@link #reserve()}), and each of its
 * datagrams is sealed ({@link PspSealer}) from there into a heap buffer and copied into the arena,
 * 32 bytes longer; from then on the sealed datagrams take the path above (runs, GSO sends, the
 * direct route) as plain ones would. Zero-copy send is off for a secured socket (EngineLoops): the
 * cipher writes new bytes anyway, and the engine's own copy into the plaintext is the cheaper gather.
 *
 * <p>Buffer ownership: the arena holds one reference to each buffer; every slice written holds one
 * more, released by Netty once sent (or here, once the direct route sent it; a caller's lone
 * datagram on the direct route is sent from the arena's buffer itself, with no slice). Delayed
 * (fault-injected) packets are released by {@link #close()} if they have not left yet. Used under
 * the loop's engine lock, on the loop or in a caller's turn.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class DatagramWriter {
    /**
     * Size of each send buffer; transmits are carved out of it back to back. Four of the largest
     * transmits (one 64 KB GSO send each) fit, so a buffer is seldom retired with room left, and
     * the arena's spares stay at a few MiB per loop. A round size, not a measured optimum.
     */
    private static final int BATCH_BYTES = 256 * 1024;
    /**
     * Flush early when this many bytes are written but not flushed: two buffers' worth, so a long
     * drain hands the kernel its datagrams while the engine is still writing, and the unflushed
     * direct memory per loop stays bounded. Far below the default 4 MiB socket send buffer, so one
     * flush does not overrun it. A round size, not a measured optimum.
     */
    private static final int FLUSH_THRESHOLD = 512 * 1024;
    /** Packets Netty's epoll channel hands to one {@code sendmmsg} at most (its array's size, UIO_MAX_IOV). */
    private static final int SENDMMSG_PACKETS = 1024;

    /** The distinct channels, and for each priority level the index of its channel. */
    private final List<Channel> channels = new ArrayList<>();
    private final int[] channelOfLevel;
    /** Packets written to each channel since its last flush (a channel with none needs no flush). */
    private final int[] queued;
    /** Whether each channel's flush is one {@code sendmmsg} (epoll) rather than a send per packet. */
    private final boolean[] batchesSends;
    /** Each channel's socket for the direct route ({@link NativeSockets}); null when a channel is not native. */
    private final Socket[] direct;
    private final boolean gso;
    /** Whether one-segment datagrams may form runs at all: GSO on and no faults injected (fixed at construction). */
    private final boolean runs;
    private final FaultInjector faults;
    private final EventLoop loop;
    private final long[] shell;
    private final SendArena arena;
    /** Room the engine needs for one transmit: maxDatagram x maxGsoSegments. */
    private final int reserveBytes;
    /**
     * Segments of one GSO send of a run at most: the configured {@code maxGsoSegments} (64 by
     * default, Linux's UDP_MAX_SEGMENTS before 6.9), not the engine's, which a 64 KB datagram
     * (loopback) cuts to one.
     */
    private final int maxSegments;
    private ByteBuf batch;
    /** The run of one-segment datagrams not yet written out (see the class comment); null when none. */
    private ByteBuf run;
    private int runStart;
    private int runBytes;
    private int runSegment;
    private int runCount;
    private int runChannel;
    private InetSocketAddress runTo;
    private int unflushedBytes;
    private final Set<DatagramPacket> delayed = Collections.newSetFromMap(new IdentityHashMap<>());
    /** Seals every datagram when the socket is secured; null when it is not. */
    private PspSealer sealer;
    /** The mutual-TLS mode's keys by destination (null: the sealer's own pre-shared key). */
    private SendKeys sendKeys;
    private int pspVersion;
    /** Where the engine writes its plaintext when sealing (see the class comment): heap memory, see {@link #sealWith}. */
    private ByteBuffer plain;
    /** One sealed packet before it is copied into the arena (heap). */
    private ByteBuffer sealedOne;

    /**
     * @param byLevel     the channel of each priority level 0..7 (levels may share one)
     * @param maxSegments the most segments one GSO send of a run may carry
     */
    public DatagramWriter(Channel[] byLevel, boolean gso, FaultInjector faults, EventLoop loop, long[] shell,
                   int reserveBytes, int maxSegments) {
        this.channelOfLevel = new int[byLevel.length];
        for (int level = 0; level < byLevel.length; level++) {
            int i = channels.indexOf(byLevel[level]);
            if (i < 0) {
                i = channels.size();
                channels.add(byLevel[level]);
            }
            channelOfLevel[level] = i;
        }
        this.queued = new int[channels.size()];
        this.batchesSends = new boolean[channels.size()];
        for (int i = 0; i < channels.size(); i++) {
            batchesSends[i] = channels.get(i) instanceof EpollDatagramChannel;
        }
        this.direct = NativeSockets.of(channels);
        this.gso = gso;
        this.faults = faults;
        this.runs = gso && faults == null;
        this.loop = loop;
        this.shell = shell;
        this.arena = new SendArena(Math.max(BATCH_BYTES, 2 * reserveBytes));
        this.reserveBytes = reserveBytes;
        this.maxSegments = maxSegments;
    }

    /**
     * Seals every datagram from now on (before the first send). {@code reserveBytes} (given to the
     * constructor) must leave room for the sealed transmit: the engine's datagrams are
     * {@link PspFormat#OVERHEAD} shorter than the MTU allows, so that the sealed ones fit it.
     * With {@code sendKeys} each datagram is sealed with the key its destination issued (under PSP
     * version {@code pspVersion}); one to a destination without a key is not sent, and counted.
     */
    public void sealWith(PspSealer sealer, SendKeys sendKeys, int pspVersion) {
        this.sealer = sealer;
        this.sendKeys = sendKeys;
        this.pspVersion = pspVersion;
        // The cipher works on heap arrays: the JDK's AES-GCM is fastest there (its intrinsics take
        // arrays; a direct buffer goes through temporary arrays, which cost 1.5x the time and 2.6x
        // the garbage per MTU-sized packet, measured in docs/benchmarks.md, "The security layer").
        // Each sealed packet is then copied into the arena's direct memory, a memcpy.
        this.plain = ByteBuffer.allocate(reserveBytes);
        this.sealedOne = ByteBuffer.allocate(Transport.MAX_UDP_PAYLOAD + PspFormat.OVERHEAD);
    }

    /** Whether a thread other than the loop can send without waking the loop (native channels). */
    public boolean sendsDirectly() {
        return direct != null;
    }

    /** Whether every channel can take more writes (none is past its high water mark). */
    public boolean writable() {
        for (int i = 0; i < channels.size(); i++) {
            if (!channels.get(i).isWritable()) {
                return false;
            }
        }
        return true;
    }

    /** A buffer with room for one transmit, positioned where the engine should write. */
    public ByteBuffer reserve() {
        batch = arena.buffer(reserveBytes);
        if (sealer != null) {
            return plain.clear();
        }
        return batch.internalNioBuffer(batch.writerIndex(), batch.writableBytes());
    }

    /**
     * Sends what the engine just wrote into the buffer from {@link #reserve()}.
     *
     * @param payload when {@link Transmit#payloadByReference()}, the caller's buffer the engine's
     *                payload view was taken from (read from its reader index; sliced, never
     *                copied); else ignored
     */
    public void send(Transmit t, ByteBuf payload) {
        int length = t.length();
        boolean byReference = t.payloadByReference();
        if (byReference && payload == null) {
            throw new IllegalStateException("no buffer owns the payload of " + t);
        }
        if (!byReference) {
            payload = null;
        }
        int chIndex = channelOfLevel[t.priority()];
        InetSocketAddress to = t.destination();
        int segments = t.segments();
        if (t.isData()) {
            int payloadBytes = length - segments * WireFormat.DATA_HEADER;
            shell[(byReference ? ShellCounter.SEND_PAYLOAD_BYTES_IN_PLACE : ShellCounter.SEND_PAYLOAD_BYTES_COPIED).ordinal()]
                    += payloadBytes;
        }
        int segmentSize = t.segmentSize();
        int written = t.written();
        if (sealer != null) {
            length = seal(t);
            if (length < 0) {
                shell[ShellCounter.SECURITY_NO_SEND_KEY.ordinal()] += segments;
                return;
            }
            written = length;
            segmentSize += PspFormat.OVERHEAD;
            byReference = false;
            payload = null;
            shell[ShellCounter.DATAGRAMS_SEALED.ordinal()] += segments;
        }
        shell[(t.isData() ? ShellCounter.BYTES_SENT_DATA : ShellCounter.BYTES_SENT_CONTROL).ordinal()] += length;
        shell[ShellCounter.DATAGRAMS_SENT.ordinal()] += segments;
        unflushedBytes += length;
        if (segments == 1 && !byReference && batchesAcrossMessages()) {
            addToRun(chIndex, to, length);
        } else {
            writeRun(); // what was written before leaves before this
            sendAlone(t, payload, chIndex, to, segments, segmentSize, length, written);
        }
        if (unflushedBytes >= FLUSH_THRESHOLD) {
            flush();
        }
    }

    /**
     * Seals the engine's datagrams of {@code t} (in {@link #plain}) back to back into the batch at
     * its writer index, which stays where it is (the send path moves it); returns the bytes written,
     * or -1 when the destination issued no key (nothing is written).
     */
    private int seal(Transmit t) {
        PspSendKey key = null;
        if (sendKeys != null && (key = sendKeys.keyFor(t.destination())) == null) {
            return -1;
        }
        ByteBuffer out = batch.internalNioBuffer(batch.writerIndex(), batch.writableBytes());
        int start = out.position();
        int segments = t.segments();
        int size = t.segmentSize();
        if (t.payloadByReference()) { // EngineLoops turns zero-copy send off for secured sockets: the cipher copies anyway
            throw new IllegalStateException("a secured socket's engine sent by reference: " + t);
        }
        for (int i = 0; i < segments; i++) {
            int off = i * size;
            sealOne(key, plain, off, Math.min(size, t.length() - off), out);
        }
        return out.position() - start;
    }

    /** Seals the packet {@code from[at, at + length)} (heap) into {@link #sealedOne}, then copies it to {@code out}. */
    private void sealOne(PspSendKey key, ByteBuffer from, int at, int length, ByteBuffer out) {
        sealedOne.clear();
        if (key == null) {
            sealer.seal(from, at, length, sealedOne);
        } else {
            sealer.seal(key, pspVersion, from, at, length, sealedOne);
        }
        out.put(sealedOne.flip());
    }

    /**
     * Whether one-segment datagrams join runs: where runs are possible, and on the loop (a caller's
     * own turn sends each datagram at once by the direct route: a batch of one).
     */
    private boolean batchesAcrossMessages() {
        return runs && (direct == null || loop.inEventLoop());
    }

    /** Adds the datagram just written (at the batch's writer index) to the run, or starts a new run with it. */
    private void addToRun(int chIndex, InetSocketAddress to, int length) {
        int at = batch.writerIndex();
        if (run != null && !(run == batch && at == runStart + runBytes && chIndex == runChannel
                && runCount < maxSegments && runBytes + length <= Transport.MAX_UDP_PAYLOAD
                && runBytes == runCount * runSegment && length <= runSegment // a shorter one ends a run
                && (to == runTo || to.equals(runTo)))) {
            writeRun();
        }
        if (run == null) {
            run = batch.retain(); // the run's hold on its buffer, passed on to the packet's slice
            runStart = at;
            runBytes = 0;
            runCount = 0;
            runSegment = length;
            runChannel = chIndex;
            runTo = to;
        }
        runBytes += length;
        runCount++;
        batch.writerIndex(at + length);
    }

    /** Writes the run out (if any): one GSO send of its datagrams, or a plain packet when it has one. */
    private void writeRun() {
        if (run == null) {
            return;
        }
        ByteBuf bytes = run.slice(runStart, runBytes); // holds the run's reference
        run = null;
        Channel ch = channels.get(runChannel);
        if (runCount == 1) {
            write(ch, runChannel, new DatagramPacket(bytes, runTo));
        } else {
            shell[ShellCounter.GSO_SENDS.ordinal()]++;
            write(ch, runChannel, new SegmentedDatagramPacket(bytes, runSegment, runTo));
        }
        runTo = null;
    }

    /**
     * Sends a transmit that joins no run, as the class comment says: {@code segments} datagrams
     * of {@code size} bytes ({@code length} in all, the last may be shorter), {@code written} of
     * them at the batch's writer index (all of them unless {@code payload} holds the rest by reference).
     */
    private void sendAlone(Transmit t, ByteBuf payload, int chIndex, InetSocketAddress to, int segments, int size,
                           int length, int written) {
        if (segments == 1 && payload == null && faults == null && sentFromBatch(chIndex, written, to)) {
            return;
        }
        ByteBuf bytes = take(written);
        Channel ch = channels.get(chIndex);
        if (faults != null) {
            sendWithFaults(ch, chIndex, bytes, payload, t, size, length);
        } else if (segments == 1) {
            write(ch, chIndex, new DatagramPacket(payload == null ? bytes
                    : inPlace(segment(ch, bytes, payload, t, 0, size, length), bytes), to));
        } else if (gso) {
            shell[ShellCounter.GSO_SENDS.ordinal()]++;
            ByteBuf all = payload == null ? bytes : inPlace(gathered(ch, bytes, payload, t), bytes);
            write(ch, chIndex, new SegmentedDatagramPacket(all, size, to));
        } else {
            for (int i = 0; i < segments; i++) {
                write(ch, chIndex, new DatagramPacket(segment(ch, bytes, payload, t, i, size, length), to));
            }
            bytes.release();
        }
    }

    /**
     * The direct route for one whole datagram still in the batch (a caller's turn): sent from the
     * batch's memory where it was written, with no slice or packet object; false where the route
     * does not apply. If the socket's buffer is full it goes to Netty as {@link #write} would send it.
     */
    private boolean sentFromBatch(int chIndex, int length, InetSocketAddress to) {
        if (direct == null || loop.inEventLoop() || !batch.hasMemoryAddress()) {
            return false;
        }
        int at = batch.writerIndex();
        if (!sendDirect(chIndex, batch, at, at + length, to)) { // the socket's buffer is full
            channels.get(chIndex).write(new DatagramPacket(take(length), to), channels.get(chIndex).voidPromise());
            queued[chIndex]++;
            return true;
        }
        batch.writerIndex(at + length);
        return true;
    }

    /** The {@code length} bytes just written after the batch's writer index, as a slice of their own. */
    private ByteBuf take(int length) {
        ByteBuf bytes = batch.retainedSlice(batch.writerIndex(), length);
        batch.writerIndex(batch.writerIndex() + length);
        return bytes;
    }

    /**
     * Datagram {@code i} of {@code t} as a buffer of its own (the caller owns one reference): a
     * slice of {@code bytes}, or with {@code payload} a composite of its header and payload slices.
     */
    private static ByteBuf segment(Channel ch, ByteBuf bytes, ByteBuf payload, Transmit t, int i, int size, int length) {
        if (payload == null) {
            int off = i * size;
            return bytes.retainedSlice(off, Math.min(size, length - off));
        }
        CompositeByteBuf c = ch.alloc().compositeDirectBuffer(2);
        addSegment(c, bytes, payload, t, i);
        return c;
    }

    /** {@code datagram}, once the headers' own reference is dropped (the datagram holds slices of them). */
    private static ByteBuf inPlace(ByteBuf datagram, ByteBuf headers) {
        headers.release();
        return datagram;
    }

    /** All datagrams of {@code t} back to back, headers interleaved with payload slices, for one GSO send. */
    private static ByteBuf gathered(Channel ch, ByteBuf headers, ByteBuf payload, Transmit t) {
        int segments = t.segments();
        CompositeByteBuf c = ch.alloc().compositeDirectBuffer(2 * segments); // at most 128 of the kernel's 1024 iovecs
        for (int i = 0; i < segments; i++) {
            addSegment(c, headers, payload, t, i);
        }
        return c;
    }

    /** Appends header {@code i} and its payload bytes, both retained slices: nothing is copied. */
    private static void addSegment(CompositeByteBuf c, ByteBuf headers, ByteBuf payload, Transmit t, int i) {
        int h = t.headerSize();
        int per = t.segmentSize() - h;
        int payloadBytes = t.length() - t.segments() * h;
        int off = i * per;
        c.addComponent(true, headers.retainedSlice(i * h, h));
        c.addComponent(true, payload.retainedSlice(payload.readerIndex() + t.payloadOffset() + off,
                Math.min(per, payloadBytes - off)));
    }

    private void sendWithFaults(Channel ch, int chIndex, ByteBuf bytes, ByteBuf payload, Transmit t, int size, int length) {
        boolean data = t.isData();
        for (int i = 0; i < t.segments(); i++) {
            DatagramPacket p = new DatagramPacket(segment(ch, bytes, payload, t, i, size, length), t.destination());
            switch (faults.decide(data)) {
                case SEND -> write(ch, chIndex, p);
                case DROP -> {
                    shell[ShellCounter.FAULTS_DROPPED.ordinal()]++;
                    p.release();
                }
                case DUPLICATE -> {
                    shell[ShellCounter.FAULTS_DUPLICATED.ordinal()]++;
                    write(ch, chIndex, p.retainedDuplicate());
                    write(ch, chIndex, p);
                }
                case DELAY -> {
                    shell[ShellCounter.FAULTS_REORDERED.ordinal()]++;
                    delayed.add(p);
                    loop.schedule(() -> {
                        if (delayed.remove(p)) {
                            shell[ShellCounter.SEND_CALLS.ordinal()]++;
                            ch.writeAndFlush(p, ch.voidPromise());
                        }
                    }, faults.delayNanos(data), TimeUnit.NANOSECONDS);
                }
            }
        }
        bytes.release();
    }

    private void write(Channel ch, int chIndex, Object packet) {
        if (direct != null && !loop.inEventLoop() && sentDirectly(chIndex, packet)) {
            return;
        }
        ch.write(packet, ch.voidPromise());
        queued[chIndex]++;
    }

    /**
     * The direct route (see the class comment): true if {@code packet} is gone (sent, or dropped on
     * an I/O error as Netty would drop it) and released; false if Netty must take it.
     */
    private boolean sentDirectly(int chIndex, Object packet) {
        if (packet instanceof SegmentedDatagramPacket || !(packet instanceof DatagramPacket p)
                || p.content().nioBufferCount() != 1) {
            return false;
        }
        ByteBuf b = p.content();
        if (!sendDirect(chIndex, b, b.readerIndex(), b.writerIndex(), p.recipient())) {
            return false; // the socket's buffer is full: Netty keeps it until it drains
        }
        p.release();
        return true;
    }

    /**
     * One {@code sendto} of {@code b[from, to)} on socket {@code chIndex}, counted: false if the
     * socket's buffer is full (EAGAIN), true if the datagram is gone (sent, or dropped on an I/O
     * error as Netty would drop it: unreachable, refused by a firewall, ...; the protocol recovers).
     */
    private boolean sendDirect(int chIndex, ByteBuf b, int from, int to, InetSocketAddress dst) {
        int n;
        shell[ShellCounter.SEND_CALLS.ordinal()]++;
        try {
            if (b.hasMemoryAddress()) {
                n = direct[chIndex].sendToAddress(b.memoryAddress(), from, to, dst.getAddress(), dst.getPort());
            } else {
                ByteBuffer nio = b.internalNioBuffer(from, to - from);
                n = direct[chIndex].sendTo(nio, nio.position(), nio.limit(), dst.getAddress(), dst.getPort());
            }
        } catch (IOException e) {
            shell[ShellCounter.IO_ERRORS.ordinal()]++;
            return true;
        }
        if (n <= 0) {
            return false;
        }
        shell[ShellCounter.CALLER_DATAGRAMS.ordinal()]++;
        return true;
    }

    /**
     * Hands every written datagram to the kernel: the run, then each channel's packets in one
     * {@code sendmmsg} (epoll; Netty's array takes up to {@value #SENDMMSG_PACKETS} per call).
     */
    public void flush() {
        writeRun();
        for (int i = 0; i < queued.length; i++) {
            if (queued[i] > 0) {
                shell[ShellCounter.SEND_CALLS.ordinal()] += batchesSends[i]
                        ? (queued[i] + SENDMMSG_PACKETS - 1) / SENDMMSG_PACKETS : queued[i];
                queued[i] = 0;
                channels.get(i).flush();
            }
        }
        unflushedBytes = 0;
    }

    /** Releases every delayed packet not yet sent, and a run not written (the arena's memory goes to the collector). */
    public void close() {
        if (run != null) {
            run.release();
            run = null;
        }
        batch = null;
        for (DatagramPacket p : delayed) {
            p.release();
        }
        delayed.clear();
    }

    /** The mutual-TLS mode's keys: which key seals a datagram to a destination (null: none yet). */
    @FunctionalInterface
    public interface SendKeys {
        PspSendKey keyFor(InetSocketAddress destination);
    }
}
