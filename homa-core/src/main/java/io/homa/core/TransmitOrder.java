package io.homa.core;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * What goes on the wire next: every control packet waiting, then the head of the sender's SRPT
 * order as far as the pacer lets it. When the pacer holds data back, this remembers when it wants
 * the engine woken, a deadline of its own beside the timer's tick.
 */
final class TransmitOrder {
    private final EngineCounters counters;
    private final ControlPackets control;
    private final SenderQueue senders;
    private final Pacer pacer;
    private final OutgoingData outgoing;
    /** Reused for every poll, so that sending allocates nothing. */
    private final Transmit transmit = new Transmit();
    /** When the pacer lets held-back data go, or {@link Long#MAX_VALUE}. */
    private long wakeAt = Long.MAX_VALUE;

    TransmitOrder(EngineCounters counters, ControlPackets control, SenderQueue senders, Pacer pacer,
                  OutgoingData outgoing) {
        this.counters = counters;
        this.control = control;
        this.senders = senders;
        this.pacer = pacer;
        this.outgoing = outgoing;
    }

    /**
     * Writes the next datagram(s) into {@code out} (checked by the caller to have room for one) and
     * describes them, or returns {@code null} when nothing may go now.
     */
    Transmit poll(long now, ByteBuffer out) {
        // Control packets first: they are small, and each unblocks a peer.
        int start = out.position();
        InetSocketAddress to = control.writeNext(out);
        if (to != null) {
            int length = out.position() - start;
            transmit.set(to, Priorities.CONTROL, length, 1, length, false);
            pacer.sent(now, length); // they pass the pacer, but the link carries them all the same
            return counted(transmit);
        }
        // Then the sender's SRPT order. Retransmissions wait for the pacer too: a burst of them
        // into a full NIC queue would only delay every control packet and short message behind it.
        wakeAt = Long.MAX_VALUE;
        OutgoingMessage m = senders.peek();
        if (m == null) {
            pacer.idle();
            return null;
        }
        if (!pacer.mayTransmit(now, outgoing.backlog(m))) {
            counters.bump(Counter.PACER_HOLDS);
            wakeAt = pacer.hold();
            return null;
        }
        outgoing.write(now, m, out, transmit);
        return counted(transmit);
    }

    private Transmit counted(Transmit t) {
        counters.add(Counter.BYTES_SENT, t.length);
        return t;
    }

    /** When the pacer wants the engine woken to send what it held back (ns), or {@link Long#MAX_VALUE}. */
    long wakeAt() {
        return wakeAt;
    }

    /**
     * The clock reached {@code now}: a wake-up that was due is counted with its lateness and
     * spent, and the caller's next {@link #poll} sends what the pacer held back.
     */
    void onTimer(long now) {
        if (now >= wakeAt) {
            counters.bump(Counter.PACER_WAKEUPS);
            counters.add(Counter.PACER_WAKEUP_LATE_NANOS, now - wakeAt);
            wakeAt = Long.MAX_VALUE;
        }
    }
}
