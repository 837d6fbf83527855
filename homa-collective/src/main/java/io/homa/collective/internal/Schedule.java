package io.homa.collective.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One rank's part of a collective: its {@link Transfer}s and the order among them. The same
 * schedule runs over sockets and in the simulator. Immutable once built; shared by runs.
 */
public final class Schedule {
    final Transfer[] transfers;
    final int sends;
    final int receives;
    private final Map<Long, Integer> receiveByKey;

    private Schedule(Transfer[] transfers) {
        this.transfers = transfers;
        int s = 0;
        receiveByKey = new HashMap<>();
        for (Transfer t : transfers) {
            if (t.send) {
                s++;
            } else {
                receiveByKey.put(key(t.peer, t.step, t.offset), t.index);
            }
        }
        this.sends = s;
        this.receives = transfers.length - s;
    }

    /** The key a received segment is matched by: who sent it, at which step, from which element. */
    static long key(int peer, int step, int offset) {
        return ((long) step << 44) | ((long) (peer & 0xFFF) << 32) | (offset & 0xFFFFFFFFL);
    }

    /** The receive that a segment from {@code peer} at {@code step} starting at {@code offset} is, or -1. */
    int receiveIndex(int peer, int step, int offset) {
        Integer i = receiveByKey.get(key(peer, step, offset));
        return i == null ? -1 : i;
    }

    public List<Transfer> transfers() {
        return List.of(transfers);
    }

    /** Adds a step's transfers, split into segments, and then works out their order. */
    static final class Builder {
        private final int segmentElements;
        private final List<Transfer> list = new ArrayList<>();

        Builder(int segmentElements) {
            this.segmentElements = Math.max(1, segmentElements);
        }

        Builder send(int step, int peer, int offset, int count) {
            return add(step, peer, offset, count, true, false);
        }

        Builder receive(int step, int peer, int offset, int count, boolean reduce) {
            return add(step, peer, offset, count, false, reduce);
        }

        private Builder add(int step, int peer, int offset, int count, boolean send, boolean reduce) {
            if (count == 0) {
                list.add(new Transfer(list.size(), step, peer, offset, 0, send, reduce));
                return this;
            }
            for (int done = 0; done < count; done += segmentElements) {
                int n = Math.min(segmentElements, count - done);
                list.add(new Transfer(list.size(), step, peer, offset + done, n, send, reduce));
            }
            return this;
        }

        Schedule build() {
            Transfer[] ts = list.toArray(new Transfer[0]);
            int[][] dependents = new int[ts.length][];
            int[] dependentCount = new int[ts.length];
            int[] scratch = new int[ts.length];
            for (Transfer t : ts) {
                int n = 0;
                for (Transfer u : ts) {
                    if (u.step >= t.step) {
                        continue;
                    }
                    boolean needed = t.send ? !u.send : (u.send || !t.reduce);
                    if (needed && t.overlaps(u)) {
                        scratch[n++] = u.index;
                    }
                }
                t.deps = Arrays.copyOf(scratch, n);
                for (int i = 0; i < n; i++) {
                    dependentCount[scratch[i]]++;
                }
            }
            for (int i = 0; i < ts.length; i++) {
                dependents[i] = new int[dependentCount[i]];
                dependentCount[i] = 0;
            }
            for (Transfer t : ts) {
                for (int d : t.deps) {
                    dependents[d][dependentCount[d]++] = t.index;
                }
            }
            for (Transfer t : ts) {
                t.dependents = dependents[t.index];
            }
            return new Schedule(ts);
        }
    }
}
