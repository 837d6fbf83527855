package io.homa.core;

/**
 * The round-trip time to one peer, smoothed as TCP does (RFC 6298: gains 1/8 and 1/4), from which
 * the engine derives how long silence must last before it asks again. Linux Homa uses fixed ticks
 * because a datacenter round trip is microseconds and a tick a millisecond; on slower or deeper
 * networks (an emulated 10 Mbit/s link queues for tens of milliseconds) fixed ticks make every
 * queued packet look lost, and the RESENDs and retransmissions they trigger fill the same queue.
 *
 * <p>Samples are taken only from exchanges that were never retransmitted (Karn's rule).
 */
final class RttEstimator {
    private long srtt;
    private long rttvar;
    private long samples;

    /** Adds one round-trip sample, in ns (negative samples, from a clock step, are ignored). */
    void sample(long nanos) {
        if (nanos < 0) {
            return;
        }
        if (samples == 0) {
            srtt = nanos;
            rttvar = nanos / 2;
        } else {
            long err = nanos - srtt;
            srtt += err / 8;
            rttvar += (Math.abs(err) - rttvar) / 4;
        }
        samples++;
    }

    /** Smoothed round trip in ns, or 0 before the first sample. */
    long smoothedNanos() {
        return srtt;
    }

    /** How long an answer may take before it counts as lost (srtt + 4 rttvar), or 0 with no sample. */
    long timeoutNanos() {
        return samples == 0 ? 0 : srtt + 4 * rttvar;
    }

    long samples() {
        return samples;
    }
}
