package io.homa.core;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * What {@link HomaEngine#pollTransmit} wrote: {@link #segments} datagrams of {@link #segmentSize}
 * bytes each (the last may be shorter), back to back in the caller's buffer, all to one
 * destination at one priority, so that they can leave in one GSO send. The object is reused by
 * the engine: read it before the next poll.
 *
 * <p>With {@link EngineConfig#sendPayloadByReference} a DATA transmit of a direct-memory payload is
 * {@linkplain #payloadByReference() by reference}: the buffer holds only the {@link #segments}
 * headers ({@link #headerSize()} bytes each, back to back, {@link #written()} in all), and segment
 * {@code i} is header {@code i} followed by payload bytes
 * {@code [payloadOffset() + i * (segmentSize() - headerSize()), ...)} of the message
 * {@link #payload()} names, {@link #length()} bytes on the wire in all.
 */
public final class Transmit {
    InetSocketAddress destination;
    int priority;
    int segmentSize;
    int segments;
    int length;
    boolean data;
    /** The message's payload (or first part) when its bytes were not copied, else null. */
    ByteBuffer payload;
    /** The message's payload read through calls when its bytes were not copied, else null. */
    OutgoingPayload source;
    int payloadOffset;
    int headerSize;
    int written;

    void set(InetSocketAddress destination, int priority, int segmentSize, int segments, int length, boolean data) {
        this.destination = destination;
        this.priority = priority;
        this.segmentSize = segmentSize;
        this.segments = segments;
        this.length = length;
        this.data = data;
        this.payload = null;
        this.source = null;
        this.written = length;
    }

    /** Marks this DATA transmit as headers only, its payload read from {@code payload} (or {@code source}) at {@code offset}. */
    void byReference(ByteBuffer payload, OutgoingPayload source, int offset, int headerSize, int written) {
        this.payload = payload;
        this.source = source;
        this.payloadOffset = offset;
        this.headerSize = headerSize;
        this.written = written;
    }

    /** Where the datagrams go. */
    public InetSocketAddress destination() { return destination; }

    /** Homa priority level 0..7 (7 highest). */
    public int priority() { return priority; }

    /** Size of each datagram but the last, which may be shorter. */
    public int segmentSize() { return segmentSize; }

    /** Number of datagrams. */
    public int segments() { return segments; }

    /** Total bytes of the datagrams (headers and payload). */
    public int length() { return length; }

    /** Bytes the engine wrote into the transmit buffer: {@link #length()}, or only the headers if by reference. */
    public int written() { return written; }

    /** Whether the payload bytes were left in the caller's buffer rather than copied (see the class comment). */
    public boolean payloadByReference() { return payload != null || source != null; }

    /**
     * The payload buffer (the first part of a payload in parts) given to the engine, the same object
     * a {@link PayloadReleaseListener} is later told about; null unless {@link #payloadByReference()}.
     */
    public ByteBuffer payload() { return payload; }

    /**
     * The {@link OutgoingPayload} given to the engine, the same object a
     * {@link PayloadReleaseListener} is later told about; null unless {@link #payloadByReference()}
     * and the message was given as one (then {@link #payload()} is null).
     */
    public OutgoingPayload source() { return source; }

    /** Offset in the message of the first segment's payload bytes (by reference only). */
    public int payloadOffset() { return payloadOffset; }

    /** Bytes of each DATA header in the buffer (by reference only). */
    public int headerSize() { return headerSize; }

    /** Whether these are DATA packets (else a single control packet). */
    public boolean isData() { return data; }

    @Override
    public String toString() {
        return "Transmit{" + destination + " prio=" + priority + " " + segments + "x" + segmentSize
                + " len=" + length + (data ? " data" : " control")
                + (payload != null ? " payload@" + payloadOffset : "") + "}";
    }
}
