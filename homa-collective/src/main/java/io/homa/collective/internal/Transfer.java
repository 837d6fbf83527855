package io.homa.collective.internal;

/**
 * One message of a rank's schedule: elements {@code [offset, offset + count)} sent to, or received
 * from, {@code peer} at {@code step}. A received segment is combined into the vector ({@link #reduce})
 * or copied over it. {@link #deps} are the transfers of earlier steps on the same rank that must be
 * done first: a send waits for every earlier receive into its elements (so it carries them), a
 * receive for every earlier send of its elements (so that it does not overwrite them before they
 * left).
 */
public final class Transfer {
    final int index;
    final int step;
    final int peer;
    final int offset;
    final int count;
    final boolean send;
    final boolean reduce;
    int[] deps;
    int[] dependents;

    Transfer(int index, int step, int peer, int offset, int count, boolean send, boolean reduce) {
        this.index = index;
        this.step = step;
        this.peer = peer;
        this.offset = offset;
        this.count = count;
        this.send = send;
        this.reduce = reduce;
    }

    boolean overlaps(Transfer o) {
        if (count == 0 || o.count == 0) {
            return true; // zero-length transfers (a barrier's) order by step alone
        }
        return offset < o.offset + o.count && o.offset < offset + count;
    }

    public int step() {
        return step;
    }

    public int peer() {
        return peer;
    }

    public int offset() {
        return offset;
    }

    public int count() {
        return count;
    }

    public boolean isSend() {
        return send;
    }

    @Override
    public String toString() {
        return (send ? "send" : reduce ? "recv+reduce" : "recv") + "{step " + step + ", peer " + peer + ", ["
                + offset + ", " + (offset + count) + ")}";
    }
}
