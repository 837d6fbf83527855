package io.homa.core;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReceivedRangesTest {

    private static int[] gaps(ReceivedRanges r, int limit, int max) {
        int[] out = new int[2 * max];
        int n = r.gaps(limit, out, max);
        return java.util.Arrays.copyOf(out, 2 * n);
    }

    /** Every other byte: [0,1), [2,3), ... , {@code count} intervals. */
    private static ReceivedRanges scattered(int count) {
        ReceivedRanges r = new ReceivedRanges();
        for (int i = 0; i < count; i++) {
            assertEquals(1, r.add(2 * i, 2 * i + 1));
        }
        return r;
    }

    // ------------------------------------------------------------------ basics

    @Test
    void empty_hasNothing() {
        ReceivedRanges r = new ReceivedRanges();
        assertEquals(0, r.total());
        assertEquals(0, r.intervals());
        assertEquals(0, r.contiguous());
        assertFalse(r.contains(0, 1));
        assertArrayEquals(new int[]{0, 100}, gaps(r, 100, 4));
    }

    @Test
    void add_inOrderSegments_growOneInterval() {
        ReceivedRanges r = new ReceivedRanges();
        assertEquals(1432, r.add(0, 1432));
        assertEquals(1432, r.add(1432, 2864));
        assertEquals(136, r.add(2864, 3000));
        assertEquals(1, r.intervals());
        assertEquals(3000, r.total());
        assertEquals(3000, r.contiguous());
    }

    @Test
    void add_exactDuplicate_returnsZero() {
        ReceivedRanges r = new ReceivedRanges();
        r.add(0, 100);
        assertEquals(0, r.add(0, 100));
        assertEquals(100, r.total());
        assertEquals(1, r.intervals());
    }

    @Test
    void add_duplicateOfEarlierInterval_returnsZero() {
        ReceivedRanges r = new ReceivedRanges();
        r.add(0, 100);
        r.add(200, 300);
        assertEquals(0, r.add(10, 90));
        assertEquals(0, r.add(0, 100));
        assertEquals(200, r.total());
        assertEquals(2, r.intervals());
    }

    @Test
    void add_subRangeOfLastInterval_returnsZero() {
        ReceivedRanges r = new ReceivedRanges();
        r.add(100, 500);
        assertEquals(0, r.add(200, 300));
        assertEquals(400, r.total());
    }

    @Test
    void add_emptyOrReversedRange_returnsZeroAndChangesNothing() {
        ReceivedRanges r = new ReceivedRanges();
        assertEquals(0, r.add(5, 5));
        assertEquals(0, r.add(10, 3));
        assertEquals(0, r.intervals());
        assertEquals(0, r.total());
    }

    @Test
    void add_overlappingTail_countsOnlyNewBytes() {
        ReceivedRanges r = new ReceivedRanges();
        r.add(0, 100);
        assertEquals(50, r.add(50, 150));
        assertEquals(150, r.total());
        assertEquals(1, r.intervals());
    }

    @Test
    void add_overlappingHead_countsOnlyNewBytes() {
        ReceivedRanges r = new ReceivedRanges();
        r.add(50, 150);
        assertEquals(50, r.add(0, 100));
        assertEquals(150, r.total());
        assertEquals(1, r.intervals());
        assertEquals(150, r.contiguous());
    }

    @Test
    void add_supersetOfInterval_countsBothEnds() {
        ReceivedRanges r = new ReceivedRanges();
        r.add(40, 60);
        assertEquals(80, r.add(0, 100));
        assertEquals(100, r.total());
        assertEquals(1, r.intervals());
    }

    @Test
    void add_outOfOrderThenFill_mergesIntoOne() {
        ReceivedRanges r = new ReceivedRanges();
        assertEquals(100, r.add(100, 200));
        assertEquals(0, r.contiguous());
        assertEquals(100, r.add(0, 100));
        assertEquals(1, r.intervals());
        assertEquals(200, r.contiguous());
    }

    @Test
    void add_fillingGapBetweenTwo_mergesTwoIntervals() {
        ReceivedRanges r = new ReceivedRanges();
        r.add(0, 10);
        r.add(20, 30);
        assertEquals(2, r.intervals());
        assertEquals(10, r.add(10, 20));
        assertEquals(1, r.intervals());
        assertEquals(30, r.total());
        assertEquals(30, r.contiguous());
    }

    @Test
    void add_overlappingBothNeighbours_mergesAndCountsGapOnly() {
        ReceivedRanges r = new ReceivedRanges();
        r.add(0, 10);
        r.add(20, 30);
        assertEquals(10, r.add(5, 25));
        assertEquals(1, r.intervals());
        assertEquals(30, r.total());
    }

    @Test
    void add_spanningManyIntervals_mergesAllAndCountsGaps() {
        ReceivedRanges r = new ReceivedRanges();
        for (int i = 0; i < 10; i++) {
            r.add(100 * i + 10, 100 * i + 50);
        }
        assertEquals(10, r.intervals());
        assertEquals(400, r.total());
        assertEquals(600, r.add(0, 1000));
        assertEquals(1, r.intervals());
        assertEquals(1000, r.total());
        assertEquals(1000, r.contiguous());
    }

    @Test
    void add_spanningMiddleIntervals_keepsOuterOnes() {
        ReceivedRanges r = new ReceivedRanges();
        for (int i = 0; i < 6; i++) {
            r.add(100 * i, 100 * i + 10);
        }
        // [205,405) already holds [205,210), [300,310) and [400,405): 20 of its 200 bytes
        assertEquals(180, r.add(205, 405));
        assertEquals(4, r.intervals());
        assertTrue(r.contains(200, 410));
        assertTrue(r.contains(0, 10));
        assertTrue(r.contains(500, 510));
        assertFalse(r.contains(100, 200));
        assertArrayEquals(new int[]{10, 100, 110, 200, 410, 500}, gaps(r, 510, 10));
    }

    @Test
    void add_touchingIntervalsOnEitherSide_merge() {
        ReceivedRanges r = new ReceivedRanges();
        r.add(100, 200);
        assertEquals(100, r.add(200, 300));
        assertEquals(100, r.add(0, 100));
        assertEquals(1, r.intervals());
        assertEquals(300, r.contiguous());
    }

    @Test
    void add_insertBeforeBetweenAndAfter_keepsSortedOrder() {
        ReceivedRanges r = new ReceivedRanges();
        r.add(500, 600);
        r.add(100, 200);
        r.add(300, 400);
        r.add(700, 800);
        r.add(0, 50);
        assertEquals(5, r.intervals());
        assertArrayEquals(new int[]{50, 100, 200, 300, 400, 500, 600, 700, 800, 900}, gaps(r, 900, 10));
    }

    @Test
    void add_growsBeyondInitialCapacity() {
        ReceivedRanges r = new ReceivedRanges();
        for (int i = 19; i >= 0; i--) {
            assertEquals(5, r.add(10 * i, 10 * i + 5));
        }
        assertEquals(20, r.intervals());
        assertEquals(100, r.total());
        for (int i = 0; i < 20; i++) {
            assertTrue(r.contains(10 * i, 10 * i + 5));
            assertFalse(r.contains(10 * i + 5, 10 * i + 6));
        }
    }

    @Test
    void add_hugeOffsets_totalIsExact() {
        ReceivedRanges r = new ReceivedRanges();
        assertEquals(Integer.MAX_VALUE - 10, r.add(10, Integer.MAX_VALUE));
        assertEquals(10, r.add(0, 10));
        assertEquals(Integer.MAX_VALUE, r.total());
        assertEquals(Integer.MAX_VALUE, r.contiguous());
    }

    // ------------------------------------------------------------------ contiguous, contains

    @Test
    void contiguous_zeroWhenFirstByteMissing() {
        ReceivedRanges r = new ReceivedRanges();
        r.add(1, 1000);
        assertEquals(0, r.contiguous());
    }

    @Test
    void contiguous_endsAtFirstGap() {
        ReceivedRanges r = new ReceivedRanges();
        r.add(0, 100);
        r.add(101, 1000);
        assertEquals(100, r.contiguous());
    }

    @Test
    void contains_insideOneInterval() {
        ReceivedRanges r = new ReceivedRanges();
        r.add(100, 200);
        assertTrue(r.contains(100, 200));
        assertTrue(r.contains(150, 160));
    }

    @Test
    void contains_rangeOverGapOrOutside_false() {
        ReceivedRanges r = new ReceivedRanges();
        r.add(0, 100);
        r.add(150, 200);
        assertFalse(r.contains(50, 160));
        assertFalse(r.contains(99, 101));
        assertFalse(r.contains(190, 201));
        assertFalse(r.contains(300, 400));
    }

    @Test
    void contains_emptyRange_true() {
        ReceivedRanges r = new ReceivedRanges();
        assertTrue(r.contains(7, 7));
        assertTrue(r.contains(9, 3));
    }

    // ------------------------------------------------------------------ gaps

    @Test
    void gaps_complete_none() {
        ReceivedRanges r = new ReceivedRanges();
        r.add(0, 100);
        assertEquals(0, gaps(r, 100, 4).length);
        assertEquals(0, gaps(r, 50, 4).length);
    }

    @Test
    void gaps_leadingMiddleAndTrailing() {
        ReceivedRanges r = new ReceivedRanges();
        r.add(10, 20);
        r.add(30, 40);
        assertArrayEquals(new int[]{0, 10, 20, 30, 40, 100}, gaps(r, 100, 8));
    }

    @Test
    void gaps_limitInsideGap_truncatesIt() {
        ReceivedRanges r = new ReceivedRanges();
        r.add(0, 10);
        r.add(50, 60);
        assertArrayEquals(new int[]{10, 30}, gaps(r, 30, 8));
    }

    @Test
    void gaps_limitInsideInterval_noTrailingGap() {
        ReceivedRanges r = new ReceivedRanges();
        r.add(0, 10);
        r.add(20, 60);
        assertArrayEquals(new int[]{10, 20}, gaps(r, 40, 8));
    }

    @Test
    void gaps_intervalsAtOrBeyondLimitIgnored() {
        ReceivedRanges r = new ReceivedRanges();
        r.add(0, 10);
        r.add(100, 110);
        r.add(200, 210);
        assertArrayEquals(new int[]{10, 100}, gaps(r, 100, 8));
    }

    @Test
    void gaps_maxLimitsCount() {
        ReceivedRanges r = scattered(10);
        assertArrayEquals(new int[]{1, 2, 3, 4, 5, 6}, gaps(r, 1000, 3));
        assertEquals(2 * 10, gaps(r, 1000, 100).length); // 9 between + 1 trailing
    }

    @Test
    void gaps_maxReachedExactlyBeforeTrailingGap_trailingOmitted() {
        ReceivedRanges r = new ReceivedRanges();
        r.add(10, 20);
        assertArrayEquals(new int[]{0, 10}, gaps(r, 100, 1));
    }

    @Test
    void gaps_maxZeroOrLimitZero_none() {
        ReceivedRanges r = new ReceivedRanges();
        r.add(10, 20);
        assertEquals(0, r.gaps(100, new int[0], 0));
        assertEquals(0, r.gaps(0, new int[4], 2));
    }

    @Test
    void gaps_emptyWithLimit_wholeRange() {
        assertArrayEquals(new int[]{0, 1432}, gaps(new ReceivedRanges(), 1432, 1));
    }

    // ------------------------------------------------------------------ MAX_INTERVALS

    @Test
    void maxIntervals_newIsolatedSegmentRefused() {
        ReceivedRanges r = scattered(ReceivedRanges.MAX_INTERVALS);
        assertEquals(ReceivedRanges.MAX_INTERVALS, r.intervals());
        assertEquals(-1, r.add(10_000, 10_001));
        assertEquals(-1, r.add(2 * ReceivedRanges.MAX_INTERVALS + 5, 2 * ReceivedRanges.MAX_INTERVALS + 9));
        assertEquals(ReceivedRanges.MAX_INTERVALS, r.intervals());
        assertEquals(ReceivedRanges.MAX_INTERVALS, r.total());
        assertFalse(r.contains(10_000, 10_001));
    }

    @Test
    void maxIntervals_refusedBeforeFirstInterval() {
        ReceivedRanges r = new ReceivedRanges();
        for (int i = 0; i < ReceivedRanges.MAX_INTERVALS; i++) {
            r.add(1000 + 2 * i, 1001 + 2 * i);
        }
        assertEquals(-1, r.add(0, 500));
        assertEquals(0, r.contiguous());
    }

    @Test
    void maxIntervals_leadingGapFilledBackwardsFromFirstInterval() {
        ReceivedRanges r = new ReceivedRanges();
        for (int i = 0; i < ReceivedRanges.MAX_INTERVALS; i++) {
            r.add(1000 + 2 * i, 1001 + 2 * i);
        }
        assertEquals(-1, r.add(0, 990));
        assertEquals(10, r.add(990, 1000));
        assertEquals(990, r.add(0, 990));
        assertEquals(1001, r.contiguous());
    }

    @Test
    void maxIntervals_segmentsThatMergeStillAccepted() {
        ReceivedRanges r = scattered(ReceivedRanges.MAX_INTERVALS);
        assertEquals(1, r.add(2 * ReceivedRanges.MAX_INTERVALS - 1, 2 * ReceivedRanges.MAX_INTERVALS));
        assertEquals(3, r.add(2 * ReceivedRanges.MAX_INTERVALS, 2 * ReceivedRanges.MAX_INTERVALS + 3));
        assertEquals(1, r.add(1, 2));
        assertEquals(ReceivedRanges.MAX_INTERVALS - 1, r.intervals());
    }

    @Test
    void maxIntervals_afterGapFilled_isolatedSegmentAcceptedAgain() {
        ReceivedRanges r = scattered(ReceivedRanges.MAX_INTERVALS);
        assertEquals(-1, r.add(5000, 5001));
        assertEquals(1, r.add(1, 2));
        assertEquals(1, r.add(5000, 5001));
        assertEquals(ReceivedRanges.MAX_INTERVALS, r.intervals());
    }

    @Test
    void maxIntervals_oneCoveringSegmentCollapsesAll() {
        ReceivedRanges r = scattered(ReceivedRanges.MAX_INTERVALS);
        assertEquals(ReceivedRanges.MAX_INTERVALS - 1, r.add(0, 2 * ReceivedRanges.MAX_INTERVALS - 1));
        assertEquals(1, r.intervals());
        assertEquals(2 * ReceivedRanges.MAX_INTERVALS - 1, r.contiguous());
    }

    // ------------------------------------------------------------------ model-based properties

    /** A random segment sequence: pairs (start, length) inside [0, 600). */
    @Provide
    Arbitrary<List<int[]>> segments() {
        Arbitrary<int[]> seg = Arbitraries.integers().between(0, 599)
                .flatMap(s -> Arbitraries.integers().between(0, 40).map(n -> new int[]{s, Math.min(600, s + n)}));
        return seg.list().ofMinSize(1).ofMaxSize(400);
    }

    private static int runs(BitSet b) {
        int n = 0;
        int i = b.nextSetBit(0);
        while (i >= 0) {
            n++;
            int end = b.nextClearBit(i);
            i = b.nextSetBit(end);
        }
        return n;
    }

    private static boolean isolated(BitSet b, int start, int end) {
        // no set bit in [start-1, end] (touching counts as merging)
        int from = Math.max(0, start - 1);
        int next = b.nextSetBit(from);
        return next < 0 || next > end;
    }

    @Property(tries = 500)
    void property_matchesBitSetModel(@ForAll("segments") List<int[]> segs,
                                     @ForAll @IntRange(min = 0, max = 650) int limit) {
        ReceivedRanges r = new ReceivedRanges();
        BitSet model = new BitSet();
        for (int[] s : segs) {
            int start = s[0];
            int end = s[1];
            boolean refuses = r.refuses(start, end);
            long missing = r.missing(start, end);
            int added = r.add(start, end);
            assertEquals(added == -1, refuses, "refuses() foretells add's refusal of [" + start + "," + end + ")");
            if (added == -1) {
                assertEquals(ReceivedRanges.MAX_INTERVALS, runs(model));
                assertTrue(isolated(model, start, end), "refused a segment that merges");
                continue;
            }
            BitSet fresh = new BitSet();
            if (start < end) {
                fresh.set(start, end);
            }
            fresh.andNot(model);
            assertEquals(fresh.cardinality(), added, "new bytes of [" + start + "," + end + ")");
            assertEquals(added, missing, "missing() foretells what add adds");
            if (start < end) {
                model.set(start, end);
            }
            assertEquals(model.cardinality(), r.total());
            assertEquals(runs(model), r.intervals());
            assertEquals(model.nextClearBit(0), r.contiguous());
        }
        // contains() agrees for every small window
        for (int a = 0; a < 620; a += 7) {
            for (int len = 1; len < 30; len += 6) {
                BitSet w = model.get(a, a + len);
                assertEquals(w.cardinality() == len, r.contains(a, a + len), "contains " + a + "+" + len);
            }
        }
        // gaps() are exactly the clear runs below limit
        List<Integer> expected = new ArrayList<>();
        int pos = model.nextClearBit(0);
        while (pos < limit) {
            int end = Math.min(limit, model.nextSetBit(pos) < 0 ? limit : model.nextSetBit(pos));
            expected.add(pos);
            expected.add(end);
            pos = model.nextClearBit(end);
        }
        int[] got = gaps(r, limit, 1000);
        assertEquals(expected.size(), got.length);
        for (int i = 0; i < got.length; i++) {
            assertEquals(expected.get(i).intValue(), got[i], "gap bound " + i);
        }
    }

    @Property(tries = 300)
    void property_gapsWithSmallMax_areAPrefixOfAllGaps(@ForAll("segments") List<int[]> segs,
                                                       @ForAll @IntRange(min = 0, max = 5) int max) {
        ReceivedRanges r = new ReceivedRanges();
        for (int[] s : segs) {
            r.add(s[0], s[1]);
        }
        int[] all = gaps(r, 600, 1000);
        int[] some = gaps(r, 600, max);
        assertEquals(Math.min(max, all.length / 2), some.length / 2);
        assertArrayEquals(java.util.Arrays.copyOf(all, some.length), some);
    }

    @Property(tries = 200)
    void property_scatteredSingleBytes_neverExceedMaxIntervals(
            @ForAll("scatter") List<Integer> starts) {
        ReceivedRanges r = new ReceivedRanges();
        BitSet model = new BitSet();
        for (int s : starts) {
            boolean refuses = r.refuses(s, s + 1);
            long missing = r.missing(s, s + 1);
            int added = r.add(s, s + 1);
            assertEquals(added == -1, refuses, "refuses() foretells add's refusal");
            if (added >= 0) {
                assertEquals(added, missing, "missing() foretells what add adds");
                if (added == 1) {
                    model.set(s);
                }
            }
            assertTrue(r.intervals() <= ReceivedRanges.MAX_INTERVALS);
        }
        assertEquals(model.cardinality(), r.total());
        assertEquals(runs(model), r.intervals());
    }

    @Provide
    Arbitrary<List<Integer>> scatter() {
        return Arbitraries.integers().between(0, 2000).map(i -> i * 3).list().ofMinSize(200).ofMaxSize(800);
    }
}
