package io.homa.core;

import java.nio.ByteBuffer;

/**
 * A message being sent: its bytes, how far it has been transmitted, how far the receiver granted,
 * and ranges queued for retransmission. The engine reads the payload with absolute gets only, so
 * the caller's buffer position and limit are never changed. The bytes are one buffer or several
 * parts in order (a composite, e.g. a request received in chunks and echoed back), read in
 * place either way: never copied into one. The engine reuses the object for a later message once
 * its RPC has ended ({@link #init}); its fields are fixed while it is in use.
 */
final class OutgoingMessage {
    Rpc rpc;
    /** The payload, or its first part: what the {@link PayloadReleaseListener} is told about. */
    ByteBuffer payload;
    /** The payload's parts, or null when {@link #payload} is all of it. */
    private ByteBuffer[] parts;
    /** The payload read through calls, or null (then {@link #payload} is, even if empty). */
    OutgoingPayload source;
    int length;
    /** Order of creation: FIFO mode and SRPT ties. */
    long seq;
    /** Bytes transmitted at least once (a prefix of the message). */
    int sent;
    /** The sender may transmit every byte below this. */
    int granted;
    /** End of the unscheduled prefix. */
    int unscheduledLimit;
    /** Priority for scheduled bytes, from the last GRANT. */
    int grantPriority;
    /** Payload bytes sent again in answer to RESENDs. */
    long retransmittedBytes;
    /** Whether this message is in the sender's SRPT queue. */
    boolean queued;

    // Ranges to retransmit (start, end, priority), a small ring.
    private static final int MAX_RETRANSMITS = 8;
    // Allocated at the first RESEND: most messages are never retransmitted.
    private int[] rtStart;
    private int[] rtEnd;
    private int[] rtPriority;
    private int rtHead;
    private int rtCount;

    OutgoingMessage(Rpc rpc, ByteBuffer payload, long seq, int unscheduledLimit) {
        this(rpc, payload, null, null, payload.remaining(), seq, unscheduledLimit);
    }

    /**
     * @param parts null, or the payload's parts ({@code payload} their first), {@code length} bytes in all
     * @param source null, or the payload read through calls ({@code payload} and {@code parts} null)
     */
    OutgoingMessage(Rpc rpc, ByteBuffer payload, ByteBuffer[] parts, OutgoingPayload source, int length, long seq,
                    int unscheduledLimit) {
        init(rpc, payload, parts, source, length, seq, unscheduledLimit);
    }

    /** A message to be {@link #init}ialised. */
    OutgoingMessage() {
    }

    /** Makes this a fresh message (as constructed) of {@code rpc}; keeps only the retransmission arrays. */
    OutgoingMessage init(Rpc rpc, ByteBuffer payload, ByteBuffer[] parts, OutgoingPayload source, int length,
                         long seq, int unscheduledLimit) {
        this.rpc = rpc;
        this.payload = payload;
        this.parts = parts;
        this.source = source;
        this.length = length;
        this.seq = seq;
        this.unscheduledLimit = Math.min(length, unscheduledLimit);
        this.granted = this.unscheduledLimit;
        this.sent = 0;
        this.grantPriority = 0;
        this.retransmittedBytes = 0;
        this.queued = false;
        this.zeroSent = false;
        this.rtHead = 0;
        this.rtCount = 0;
        return this;
    }

    /** Its RPC ended: drops the references to the RPC and the caller's bytes until {@link #init}. */
    void clear() {
        rpc = null;
        payload = null;
        parts = null;
        source = null;
    }

    /** Bytes between position and limit of all {@code parts}, which must not be empty. */
    static int lengthOf(ByteBuffer[] parts) {
        if (parts.length == 0) {
            throw new IllegalArgumentException("a payload in parts needs at least one part");
        }
        long n = 0;
        for (ByteBuffer b : parts) {
            n += b.remaining();
        }
        return (int) Math.min(n, Integer.MAX_VALUE);
    }

    /** Whether every payload byte is in direct memory: a shell can send it in place (see {@link EngineConfig#sendPayloadByReference}). */
    boolean direct() {
        if (source != null) {
            return source.payloadDirect();
        }
        if (parts == null) {
            return payload.isDirect();
        }
        for (ByteBuffer b : parts) {
            if (!b.isDirect()) {
                return false;
            }
        }
        return true;
    }

    /** Copies payload bytes {@code [offset, offset + n)} into {@code out} at absolute index {@code at}. */
    void copyPayload(ByteBuffer out, int at, int offset, int n) {
        if (source != null) {
            source.copyPayload(offset, out, at, n);
            return;
        }
        if (parts == null) {
            out.put(at, payload, payload.position() + offset, n);
            return;
        }
        int i = 0;
        while (offset >= parts[i].remaining()) { // a few parts at most: a linear walk
            offset -= parts[i].remaining();
            i++;
        }
        while (n > 0) {
            ByteBuffer b = parts[i];
            int k = Math.min(n, b.remaining() - offset);
            out.put(at, b, b.position() + offset, k);
            at += k;
            n -= k;
            offset = 0;
            i++;
        }
    }

    /** Bytes not yet transmitted once: the sender's SRPT key. */
    int remaining() {
        return length - sent;
    }

    boolean hasNewData() {
        return sent < granted || (length == 0 && sent == 0 && !zeroSent);
    }

    /** A zero-length message still sends one (empty) DATA packet. */
    boolean zeroSent;

    boolean hasRetransmit() {
        return rtCount > 0;
    }

    boolean sendable() {
        return hasNewData() || hasRetransmit();
    }

    boolean fullySent() {
        return length == 0 ? zeroSent : sent >= length;
    }

    /** Queues {@code [start, end)} for retransmission, merging with a queued overlapping range. */
    void queueRetransmit(int start, int end, int priority) {
        if (start >= end) {
            return;
        }
        if (rtStart == null) {
            rtStart = new int[MAX_RETRANSMITS];
            rtEnd = new int[MAX_RETRANSMITS];
            rtPriority = new int[MAX_RETRANSMITS];
        }
        // Absorb every queued range the new one overlaps or touches, then queue the union.
        int kept = 0;
        for (int i = 0; i < rtCount; i++) {
            int k = (rtHead + i) % MAX_RETRANSMITS;
            if (start <= rtEnd[k] && end >= rtStart[k]) {
                start = Math.min(start, rtStart[k]);
                end = Math.max(end, rtEnd[k]);
                priority = Math.max(priority, rtPriority[k]);
            } else {
                int d = (rtHead + kept) % MAX_RETRANSMITS;
                rtStart[d] = rtStart[k];
                rtEnd[d] = rtEnd[k];
                rtPriority[d] = rtPriority[k];
                kept++;
            }
        }
        rtCount = kept;
        if (rtCount == MAX_RETRANSMITS) {
            return; // the receiver asks again after resend_interval
        }
        int k = (rtHead + rtCount) % MAX_RETRANSMITS;
        rtStart[k] = start;
        rtEnd[k] = end;
        rtPriority[k] = priority;
        rtCount++;
    }

    int retransmitStart() { return rtStart[rtHead]; }

    int retransmitEnd() { return rtEnd[rtHead]; }

    int retransmitPriority() { return rtPriority[rtHead]; }

    /** Marks the head range as sent up to {@code upTo}. */
    void retransmitted(int upTo) {
        if (upTo >= rtEnd[rtHead]) {
            rtHead = (rtHead + 1) % MAX_RETRANSMITS;
            rtCount--;
        } else {
            rtStart[rtHead] = upTo;
        }
    }

    /** Forget all progress: the request restarts from offset 0 (after RPC_UNKNOWN). */
    void restart() {
        sent = 0;
        zeroSent = false;
        granted = unscheduledLimit;
        rtCount = 0;
        rtHead = 0;
    }
}
