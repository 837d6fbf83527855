package io.homa.core;

import java.nio.ByteBuffer;

/**
 * A message being sent: its bytes, how far it has been transmitted, how far the receiver granted,
 * and ranges queued for retransmission. The engine reads the payload with absolute gets only, so
 * the caller's buffer position and limit are never changed. The engine reuses the object for a
 * later message once its RPC has ended ({@link #init}); its fields are fixed while it is in use.
 */
final class OutgoingMessage {
    Rpc rpc;
    ByteBuffer payload;
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
        init(rpc, payload, seq, unscheduledLimit);
    }

    /** A message to be {@link #init}ialised. */
    OutgoingMessage() {
    }

    /** Makes this a fresh message (as constructed) of {@code rpc}; keeps only the retransmission arrays. */
    OutgoingMessage init(Rpc rpc, ByteBuffer payload, long seq, int unscheduledLimit) {
        this.rpc = rpc;
        this.payload = payload;
        this.length = payload.remaining();
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
    }

    /** Payload byte {@code offset} of the message is at this absolute index of {@link #payload}. */
    int payloadIndex(int offset) {
        return payload.position() + offset;
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
