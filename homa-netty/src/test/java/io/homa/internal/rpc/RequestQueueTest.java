package io.homa.internal.rpc;

import io.homa.core.ReceivedMessage;
import io.homa.internal.Failure;
import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.*;

/**
 * The handler queue's policy with the clock in the test's hands: first in, first out while it
 * empties now and then; newest first, and refusals past the target, once it has not been empty for
 * an interval; never a request whose deadline passed; target and interval raised to the handlers'
 * own pace.
 */
@org.junit.jupiter.api.extension.ExtendWith(io.homa.LeakCheck.class)
class RequestQueueTest {
    private static final long MS = 1_000_000L;
    private static final long TARGET = 5 * MS;
    private static final long INTERVAL = 100 * MS;

    private final List<Request> made = new ArrayList<>();

    /** A request that only remembers what was done to it. */
    private static final class Request extends InboundRequest {
        final int n;

        Request(int n, long deadline) {
            super(NO_PATH, 2L * n + 2, new InetSocketAddress("127.0.0.1", 1000), ReceivedMessage.of(new byte[]{(byte) n}));
            this.n = n;
            this.deadline = deadline;
        }

        @Override
        protected RuntimeException failure(Failure kind, String message) {
            return new IllegalArgumentException(message);
        }
    }

    private static final InboundRequest.Path NO_PATH = new InboundRequest.Path() {
        @Override public void reply(InboundRequest r, byte[] bytes, ByteBuf owner) { }
        @Override public void dropRequest(InboundRequest r, String why) { r.markDropped(); }
        @Override public void expireRequest(InboundRequest r) { r.markDropped(); }
        @Override public void shedRequest(InboundRequest r, long waitedNanos) { r.markDropped(); }
        @Override public void skippedRequest(InboundRequest r) { }
        @Override public boolean isClosed() { return false; }
        @Override public int maxReplyLength() { return 100; }
    };

    private Request request(int n, long deadline) {
        Request r = new Request(n, deadline);
        made.add(r);
        return r;
    }

    private static int takeN(RequestQueue q, long now) {
        InboundRequest r = q.take(now);
        assertNotNull(r);
        assertEquals(RequestQueue.RUN, r.queueVerdict(), "verdict");
        return ((Request) r).n;
    }

    @Test
    void fifo_whileTheQueueEmptiesNowAndThen_andLongWaitsAreFine() {
        RequestQueue q = new RequestQueue(100, TARGET, INTERVAL, 1);
        handlersTake(q, 10 * MS);
        long now = 0;
        for (int i = 0; i < 3; i++) {
            assertTrue(q.offer(request(i, now + 10_000 * MS), now));
        }
        now += 50 * MS; // ten targets, but under an interval: not overload
        assertNull(q.pollStale(now));
        assertEquals(0, takeN(q, now));
        assertEquals(1, takeN(q, now));
        assertEquals(2, takeN(q, now));
        assertNull(q.take(now));
    }

    /** Handlers that take {@code nanos} each, as far as the queue's mean can tell. */
    private static void handlersTake(RequestQueue q, long nanos) {
        for (int i = 0; i < 400; i++) { // enough for the slower mean (1/32 a sample) too
            q.started();
            q.served(nanos);
        }
    }

    @Test
    void overload_newestFirst_andTheOldestRefusedOnceTheHandlersCannotReachItWithTimeToSpare() {
        RequestQueue q = new RequestQueue(10_000, TARGET, INTERVAL, 1);
        handlersTake(q, 10 * MS); // target 10 ms, interval 100 ms
        assertTrue(q.offer(request(0, 200 * MS), 0));
        for (int i = 1; i <= 20; i++) {
            long now = (100 + i) * MS;
            assertTrue(q.offer(request(i, now + 1_000 * MS), now));
        }
        long now = 120 * MS;
        // Request 0 waited 120 ms, and 20 requests of 10 ms each go before it: 200 ms of work,
        // but it has 80 ms left. Refused. Request 1 has 981 ms left for 190 ms of work: it stays.
        InboundRequest s = q.pollStale(now);
        assertNotNull(s);
        assertEquals(0, ((Request) s).n);
        assertEquals(RequestQueue.SHED, s.queueVerdict());
        assertNull(q.pollStale(now));
        assertEquals(20, q.size());
        assertEquals(20, takeN(q, now), "newest first under overload");
        assertEquals(19, takeN(q, now));
    }

    @Test
    void aFlood_isRefusedAtItsOldEnd_keepingWhatTheHandlersCanServeWithTimeToSpare() {
        RequestQueue q = new RequestQueue(10_000, TARGET, INTERVAL, 2);
        handlersTake(q, 10 * MS); // 200 a second at most
        long now = 0;
        for (int i = 0; i < 1_000; i++) { // 2,000 a second, each with 5 s to go
            q.offer(request(i, now + 5_000 * MS), now);
            now += MS / 2;
        }
        now -= MS / 2; // 499.5 ms
        List<Integer> shed = new ArrayList<>();
        InboundRequest s;
        while ((s = q.pollStale(now)) != null) {
            assertEquals(RequestQueue.SHED, s.queueVerdict());
            shed.add(((Request) s).n);
        }
        // Request k has 4,500.5 + k/2 ms left and 999 - k requests of 5 ms (two threads) in
        // front: it is refused while (999 - k) * 5 >= 0.8 * (4,500.5 + k / 2), for k = 0..258.
        assertEquals(259, shed.size());
        assertEquals(0, shed.get(0));
        assertEquals(258, shed.get(shed.size() - 1));
        assertEquals(741, q.size(), "kept: what two threads serve in about 3.7 s, 0.8 of the time those callers have left");
        assertEquals(999, takeN(q, now), "newest first");
    }

    /** 1,000 requests at 0, each with 5 s to go, behind handlers of 10 ms on two threads (5 ms a request). */
    private RequestQueue floodedAtZero() {
        RequestQueue q = new RequestQueue(10_000, TARGET, INTERVAL, 2);
        handlersTake(q, 10 * MS);
        for (int i = 0; i < 1_000; i++) {
            assertTrue(q.offer(request(i, 5_000 * MS), 0));
        }
        return q;
    }

    /**
     * Handlers finish one request every 20 ms from 100 ms to 580 ms: the first opens a span, and
     * each 8 after it close one, so the median of 3 spans (all 20 ms a request) is measured at 580 ms.
     */
    private static void finishEvery20Ms(RequestQueue q) {
        for (int i = 0; i <= RequestQueue.PACE_SPANS_NEEDED * RequestQueue.PACE_WINDOW_COMPLETIONS; i++) {
            q.completed((100 + 20L * i) * MS);
        }
    }

    private static int shedAll(RequestQueue q, long now) {
        int n = 0;
        InboundRequest s;
        while ((s = q.pollStale(now)) != null) {
            assertEquals(RequestQueue.SHED, s.queueVerdict());
            n++;
        }
        return n;
    }

    @Test
    void handlersThatFinishSlowerThanTheirMeanTime_keepTheQueueToWhatTheyReallyServe() {
        RequestQueue q = floodedAtZero();
        finishEvery20Ms(q); // a machine short of CPU: one every 20 ms, not every 5 ms
        // At 580 ms each has 4,420 ms left; at 20 ms a request, 176 in front take 3,520 ms, under
        // 0.8 of it (3,536 ms), and 177 take 3,540: the oldest 823 are refused.
        assertEquals(823, shedAll(q, 580 * MS));
        assertEquals(177, q.size());
    }

    @Test
    void aMeasuredPaceHoldsForItsMemory() {
        RequestQueue q = floodedAtZero();
        finishEvery20Ms(q); // measured at 580 ms
        long now = 580 * MS + RequestQueue.PACE_MEMORY_NANOS - MS;
        // 2,421 ms left; at 20 ms a request, 96 in front take 1,920 ms, under 0.8 * 2,421 =
        // 1,936.8 ms, and 97 take 1,940 ms: the oldest 903 are refused.
        assertEquals(903, shedAll(q, now));
        assertEquals(97, q.size());
    }

    @Test
    void aMeasuredPaceIsForgottenOnceItIsOld_andTheMeanHandlerTimeRulesAgain() {
        RequestQueue q = floodedAtZero();
        finishEvery20Ms(q); // measured at 580 ms
        long now = 580 * MS + RequestQueue.PACE_MEMORY_NANOS + MS;
        // 2,419 ms left; at 5 ms a request, 387 in front take 1,935 ms, under 0.8 * 2,419 =
        // 1,935.2 ms, and 388 take 1,940 ms: the oldest 612 are refused.
        assertEquals(612, shedAll(q, now));
        assertEquals(388, q.size());
    }

    @Test
    void theSpansOfAnOverloadLongPast_doNotComeBackWithTheNext() {
        RequestQueue q = floodedAtZero();
        finishEvery20Ms(q); // three spans of 20 ms a request, the last ending at 580 ms
        int taken = 0;
        while (q.take(2_590 * MS) != null) { // worked off: the queue empties
            taken++;
        }
        assertEquals(1_000, taken);
        long t0 = 2_600 * MS;
        for (int i = 0; i < 1_000; i++) {
            assertTrue(q.offer(request(1_000 + i, t0 + 5_000 * MS), t0));
        }
        for (int i = 0; i <= RequestQueue.PACE_WINDOW_COMPLETIONS; i++) { // one new span, 2.5 ms a request
            q.completed(t0 + MS + i * MS * 5 / 2);
        }
        // One fresh span is not enough, and the old three are past the memory: the mean rules.
        // 4,879 ms left; at 5 ms a request, 780 in front take 3,900 ms, under 0.8 * 4,879 =
        // 3,903.2 ms, and 781 take 3,905 ms: the oldest 219 are refused (at 20 ms: 804).
        assertEquals(219, shedAll(q, t0 + 121 * MS));
        assertEquals(781, q.size());
    }

    @Test
    void twoSpansAreNotEnough() {
        RequestQueue q = floodedAtZero();
        for (int i = 0; i <= 2 * RequestQueue.PACE_WINDOW_COMPLETIONS; i++) { // spans ending at 260 and 420 ms
            q.completed((100 + 20L * i) * MS);
        }
        // 4,580 ms left; at 5 ms a request (not 20), 732 in front take 3,660 ms, under 0.8 * 4,580
        // = 3,664 ms, and 733 take 3,665 ms: the oldest 267 are refused.
        assertEquals(267, shedAll(q, 420 * MS));
        assertEquals(733, q.size());
    }

    @Test
    void oneSlowSpanAmongFastOnes_movesNothing() {
        RequestQueue q = floodedAtZero();
        q.completed(100 * MS); // opens a span
        long t = 100 * MS;
        for (long step : new long[]{MS * 5 / 2, 20 * MS, MS * 5 / 2}) { // spans of 2.5, 20 and 2.5 ms a request
            for (int i = 0; i < RequestQueue.PACE_WINDOW_COMPLETIONS; i++) {
                t += step;
                q.completed(t);
            }
        }
        assertEquals(300 * MS, t);
        // The median is 2.5 ms, faster than the mean's 5 ms, which rules. At 310 ms, 4,690 ms
        // left: 750 in front take 3,750 ms, under 0.8 * 4,690 = 3,752 ms, and 751 take 3,755 ms:
        // the oldest 249 are refused (at the slow span's 20 ms: 812).
        assertEquals(249, shedAll(q, 310 * MS));
        assertEquals(751, q.size());
    }

    @Test
    void aSpanInWhichTheQueueEmptied_isNotTheHandlersPace() {
        // (at 5 ms a request, as the mean handler time says)
        RequestQueue q = new RequestQueue(10_000, TARGET, INTERVAL, 2);
        handlersTake(q, 10 * MS);
        // One request every 20 ms, taken at once: the handlers wait for work. Counted as spans,
        // these 40 completions would make 4 of 20 ms a request.
        for (int i = 0; i < 40; i++) {
            long t = 20L * i * MS;
            q.offer(request(10_000 + i, t + 5_000 * MS), t);
            q.completed(t + MS);
            assertEquals(10_000 + i, takeN(q, t + 2 * MS));
        }
        long t0 = 800 * MS;
        for (int i = 0; i < 1_000; i++) {
            assertTrue(q.offer(request(i, t0 + 5_000 * MS), t0));
        }
        // As if nothing were measured: 4,790 ms left; at 5 ms a request, 766 in front take
        // 3,830 ms, under 0.8 * 4,790 = 3,832 ms, and 767 take 3,835 ms: the oldest 233 are refused.
        assertEquals(233, shedAll(q, t0 + 210 * MS));
        assertEquals(767, q.size());
    }

    @Test
    void aBurstTheHandlersCanWorkOffInTime_isServedWhole_evenUnderOverload() {
        RequestQueue q = new RequestQueue(20_000, TARGET, INTERVAL, 2);
        handlersTake(q, 50_000); // 50 us each, two threads
        for (int i = 0; i < 10_000; i++) {
            assertTrue(q.offer(request(i, 30_000 * MS), 0));
        }
        // 200 ms later (overload: never empty for an interval), the oldest waits for 250 ms of
        // work, with 29.8 s to go.
        assertNull(q.pollStale(200 * MS), "nothing is refused that can be served in time");
        assertEquals(9_999, takeN(q, 200 * MS), "but the newest go first");
    }

    @Test
    void overload_aTakenRequestRunsEvenPastTheTarget_unlessItsDeadlinePassed_andTheQueueRecovers() {
        RequestQueue q = new RequestQueue(100, TARGET, INTERVAL, 1);
        handlersTake(q, 10 * MS);
        q.offer(request(0, 125 * MS), 0);
        q.offer(request(1, 10_000 * MS), 110 * MS);
        long now = 130 * MS; // overload; 1 waited 20 ms, past the target, but is the newest
        assertEquals(1, takeN(q, now));
        InboundRequest r = q.take(now);
        assertEquals(0, ((Request) r).n);
        assertEquals(RequestQueue.EXPIRED, r.queueVerdict());
        assertNull(q.take(now));
        // Empty again: a new request is served first in, first out, however long it then waits.
        q.offer(request(2, now + 10_000 * MS), now);
        q.offer(request(3, now + 10_000 * MS), now);
        now += 50 * MS;
        assertEquals(2, takeN(q, now));
    }

    @Test
    void fifo_aNewRequestThatTheWorkInFrontOfItWouldOutlast_isRefusedAtOnce_notLeftToExpire() {
        RequestQueue q = new RequestQueue(100, TARGET, INTERVAL, 2);
        handlersTake(q, 10 * MS); // two handlers: 5 ms a request
        long now = 0;
        for (int i = 0; i < 10; i++) { // 50 ms of work
            assertTrue(q.offer(request(i, now + 10_000 * MS), now));
            assertNull(q.pollStale(now));
        }
        // 49 ms left, behind 50 ms of work: it would only expire. Refused at once (not overload).
        assertTrue(q.offer(request(10, now + 49 * MS), now));
        InboundRequest s = q.pollStale(now);
        assertNotNull(s);
        assertEquals(10, ((Request) s).n);
        assertEquals(RequestQueue.SHED, s.queueVerdict());
        assertNull(q.pollStale(now));
        // 51 ms left: it may make it (no share held back outside overload). It waits.
        assertTrue(q.offer(request(11, now + 51 * MS), now));
        assertNull(q.pollStale(now));
        assertEquals(11, q.size());
        assertEquals(0, takeN(q, now), "first in, first out");
    }

    @Test
    void fifo_aNewRequestWhoseDeadlineHasPassed_expires_isNotRefused() {
        RequestQueue q = new RequestQueue(100, TARGET, INTERVAL, 1);
        handlersTake(q, 10 * MS);
        assertTrue(q.offer(request(0, 10_000 * MS), 0));
        assertTrue(q.offer(request(1, 0), 0)); // its caller's time is up as it arrives
        assertNull(q.pollStale(0), "not refused: it is dropped as expired (and remembered) when taken");
        assertEquals(0, takeN(q, 0));
        InboundRequest r = q.take(0);
        assertEquals(1, ((Request) r).n);
        assertEquals(RequestQueue.EXPIRED, r.queueVerdict());
    }

    /**
     * An overloaded queue (not empty for 115 ms, handlers of 2 ms: target 5 ms) whose oldest
     * request, queued 2 ms ago with {@code deadline}, has 10 newer ones in front of it (20 ms of
     * work); returns what the queue refuses or drops at 115 ms, after the cancelled request that
     * was older still.
     */
    private InboundRequest staleAfterTwoMs(RequestQueue q, long deadline) {
        handlersTake(q, 2 * MS);
        Request a = request(0, 10_000 * MS);
        assertTrue(q.offer(a, 0));
        assertTrue(q.offer(request(1, deadline), 113 * MS));
        for (int i = 2; i <= 11; i++) {
            assertTrue(q.offer(request(i, 10_000 * MS), 114 * MS));
        }
        a.markDropped(); // its client cancelled: request 1 is now the oldest
        InboundRequest gone = q.pollStale(115 * MS);
        assertEquals(0, ((Request) gone).n);
        assertEquals(RequestQueue.GONE, gone.queueVerdict());
        return q.pollStale(115 * MS);
    }

    @Test
    void overload_theOldestThatWouldOnlyExpire_isRefusedWithoutWaitingForTheTarget() {
        RequestQueue q = new RequestQueue(10_000, TARGET, INTERVAL, 1);
        // 10 ms left at 115 ms, behind 20 ms of work, after 2 ms of the 5 ms target.
        InboundRequest s = staleAfterTwoMs(q, 125 * MS);
        assertNotNull(s);
        assertEquals(1, ((Request) s).n);
        assertEquals(RequestQueue.SHED, s.queueVerdict());
        assertNull(q.pollStale(115 * MS), "request 2 has seconds left");
        assertEquals(11, takeN(q, 115 * MS), "newest first");
    }

    @Test
    void overload_theOldestThatMayStillBeServed_waitsForTheTarget_evenWithLessThanTheShareToSpare() {
        RequestQueue q = new RequestQueue(10_000, TARGET, INTERVAL, 1);
        // 22 ms left behind 20 ms of work: more than 0.8 of its time (which after the target would
        // refuse it), but it can still be served: before the target, it stays.
        assertNull(staleAfterTwoMs(q, 137 * MS));
        assertEquals(11, q.size());
    }

    @Test
    void aRequestWhoseDeadlinePassed_isNeverRun() {
        RequestQueue q = new RequestQueue(100, TARGET, INTERVAL, 1);
        q.offer(request(0, 10 * MS), 0);
        q.offer(request(1, 1_000 * MS), 0);
        InboundRequest r = q.take(10 * MS);
        assertEquals(0, ((Request) r).n);
        assertEquals(RequestQueue.EXPIRED, r.queueVerdict(), "at its deadline: too late");
        assertEquals(1, takeN(q, 10 * MS));
    }

    @Test
    void aRequestAnsweredOrDroppedWhileItWaited_isGone() {
        RequestQueue q = new RequestQueue(100, TARGET, INTERVAL, 1);
        Request a = request(0, 1_000 * MS);
        q.offer(a, 0);
        a.markDropped(); // e.g. its client cancelled
        assertEquals(RequestQueue.GONE, q.take(MS).queueVerdict());
    }

    @Test
    void full_refusesTheNext() {
        RequestQueue q = new RequestQueue(2, TARGET, INTERVAL, 1);
        assertTrue(q.offer(request(0, MS), 0));
        assertTrue(q.offer(request(1, MS), 0));
        assertFalse(q.offer(request(2, MS), 0));
        assertEquals(2, q.highWater());
    }

    @Test
    void slowHandlers_raiseTheTargetAndTheInterval() {
        RequestQueue q = new RequestQueue(100, TARGET, INTERVAL, 1);
        handlersTake(q, 100 * MS);
        assertTrue(q.target() > 95 * MS && q.target() <= 100 * MS, "target " + q.target());
        assertTrue(q.interval() > 380 * MS && q.interval() <= 400 * MS, "interval " + q.interval());
        // A queue 300 ms old is a slow handler's normal queue, not overload: first in, first out.
        q.offer(request(0, 10_000 * MS), 0);
        q.offer(request(1, 10_000 * MS), 0);
        assertNull(q.pollStale(300 * MS));
        assertEquals(0, takeN(q, 300 * MS));
    }

    @Test
    void aHandlerStalledOnce_doesNotMakeTheQueueThinkItsHandlersSlow() {
        RequestQueue q = new RequestQueue(100, TARGET, INTERVAL, 2);
        handlersTake(q, 100_000); // 100 us each
        q.started();
        q.served(1_000 * MS); // one handler preempted for a second (a collection, the JIT)
        assertEquals(TARGET, q.target(), "the mean stays far below the 5 ms floor");
        assertEquals(INTERVAL, q.interval());
    }

    @Test
    void delays_areCountedInPowerOfTwoMicrosecondBuckets() {
        RequestQueue q = new RequestQueue(100, TARGET, INTERVAL, 1);
        q.offer(request(0, 10_000 * MS), 0);
        takeN(q, 3_000); // 3 us: bucket 1, [2, 4)
        q.offer(request(1, 10_000 * MS), 0);
        takeN(q, MS); // 1,000 us: bucket 9, [512, 1024)
        long[] h = new long[RequestQueue.DELAY_BUCKETS];
        q.addDelays(h);
        assertEquals(1, h[1]);
        assertEquals(1, h[9]);
        assertEquals(2, java.util.Arrays.stream(h).sum());
    }

    @org.junit.jupiter.api.AfterEach
    void release() {
        made.forEach(InboundRequest::markDropped); // frees each request's bytes (the leak detector watches)
    }
}
