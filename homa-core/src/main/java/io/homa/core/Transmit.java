package io.homa.core;

import java.net.InetSocketAddress;

/**
 * What {@link HomaEngine#pollTransmit} wrote: {@link #segments} datagrams of {@link #segmentSize}
 * bytes each (the last may be shorter), back to back in the caller's buffer, all to one
 * destination at one priority, so that they can leave in one GSO send. The object is reused by
 * the engine: read it before the next poll.
 */
public final class Transmit {
    InetSocketAddress destination;
    int priority;
    int segmentSize;
    int segments;
    int length;
    boolean data;

    void set(InetSocketAddress destination, int priority, int segmentSize, int segments, int length, boolean data) {
        this.destination = destination;
        this.priority = priority;
        this.segmentSize = segmentSize;
        this.segments = segments;
        this.length = length;
        this.data = data;
    }

    /** Where the datagrams go. */
    public InetSocketAddress destination() { return destination; }

    /** Homa priority level 0..7 (7 highest). */
    public int priority() { return priority; }

    /** Size of each datagram but the last, which may be shorter. */
    public int segmentSize() { return segmentSize; }

    /** Number of datagrams. */
    public int segments() { return segments; }

    /** Total bytes written. */
    public int length() { return length; }

    /** Whether these are DATA packets (else a single control packet). */
    public boolean isData() { return data; }

    @Override
    public String toString() {
        return "Transmit{" + destination + " prio=" + priority + " " + segments + "x" + segmentSize
                + " len=" + length + (data ? " data" : " control") + "}";
    }
}
