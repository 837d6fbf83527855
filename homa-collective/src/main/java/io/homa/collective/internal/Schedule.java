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
            for (long done = 0; done < count; done += segmentElements) { // long: no overflow near 2^31 elements
                int n = (int) Math.min(segmentElements, count - done);
                list.add(new Transfer(list.size(), step, peer, (int) (offset + done), n, send, reduce));
            }
            return this;
        }

        Schedule build() {
            Transfer[] ts = list.toArray(new Transfer[0]);
            int[][] dependents = new int[ts.length][];
            int[] dependentCount = new int[ts.length];
            // Per step, its sends and its receives in the order added: each a step's block split
            // into segments, so sorted by offset (binary search finds the overlapping ones).
            java.util.TreeMap<Integer, Step> sendsByStep = new java.util.TreeMap<>();
            java.util.TreeMap<Integer, Step> receivesByStep = new java.util.TreeMap<>();
            for (Transfer t : ts) {
                (t.send ? sendsByStep : receivesByStep).computeIfAbsent(t.step, k -> new Step()).list.add(t);
            }
            sendsByStep.values().forEach(Step::seal);
            receivesByStep.values().forEach(Step::seal);
            int[] scratch = new int[ts.length];
            for (Transfer t : ts) {
                int n = 0;
                if (t.send) {
                    n = overlapping(receivesByStep.headMap(t.step), t, scratch, n);
                } else {
                    n = overlapping(sendsByStep.headMap(t.step), t, scratch, n);
                    if (!t.reduce) {
                        n = overlapping(receivesByStep.headMap(t.step), t, scratch, n);
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

        /** Adds to {@code out} the transfers of {@code earlier} steps that overlap {@code t}; returns the new count. */
        private static int overlapping(Map<Integer, Step> earlier, Transfer t, int[] out, int n) {
            for (Step st : earlier.values()) {
                List<Transfer> step = st.list;
                if (t.count == 0 || !st.sorted) {
                    for (Transfer u : step) {
                        if (t.overlaps(u)) {
                            out[n++] = u.index;
                        }
                    }
                    continue;
                }
                // The first segment that ends after t starts, then on while segments start before t ends.
                int lo = 0;
                int hi = step.size();
                while (lo < hi) {
                    int mid = (lo + hi) >>> 1;
                    Transfer u = step.get(mid);
                    if (u.offset + u.count <= t.offset) {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                for (int i = lo; i < step.size() && step.get(i).offset < t.offset + t.count; i++) {
                    out[n++] = step.get(i).index;
                }
            }
            return n;
        }

        /** One step's sends or receives, and whether they are non-empty segments in increasing offset order (the binary search's premise). */
        private static final class Step {
            final List<Transfer> list = new ArrayList<>();
            boolean sorted;

            void seal() {
                sorted = true;
                for (int i = 0; i < list.size(); i++) {
                    Transfer u = list.get(i);
                    if (u.count == 0 || (i > 0 && list.get(i - 1).offset + list.get(i - 1).count > u.offset)) {
                        sorted = false;
                        return;
                    }
                }
            }
        }
    }
}
