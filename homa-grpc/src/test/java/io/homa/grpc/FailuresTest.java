package io.homa.grpc;

import io.grpc.Deadline;
import io.grpc.Status;
import io.homa.HomaOutcomeUnknownException;
import io.homa.HomaOverloadedException;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The gRPC status of a Homa failure (docs/grpc.md's table), for the failures of a server restart and overload. */
class FailuresTest {
    @Test
    void outcomeUnknown_isUnavailable_withTheCauseAndWhy() {
        HomaOutcomeUnknownException e = new HomaOutcomeUnknownException("call 7 to 10.0.0.1:4000: may have run");
        Status s = Failures.toStatus(new CompletionException(e), null);
        assertEquals(Status.Code.UNAVAILABLE, s.getCode());
        assertSame(e, s.getCause());
        assertTrue(s.getDescription().contains("restarted"), s.getDescription());
    }

    @Test
    void overloaded_isUnavailable() {
        assertEquals(Status.Code.UNAVAILABLE, Failures.toStatus(new HomaOverloadedException("refused"), null).getCode());
    }

    /**
     * A refusal is the deadline's when the call has no more time left than the server's guard
     * (2% of what OPEN carried, 1-100 ms) and 5 ms: 300 ms sent, 6 + 5 ms; 10 s sent, 100 + 5 ms.
     */
    @Test
    void aRefusalAtTheDeadline_isTheDeadlines() {
        AtomicLong now = new AtomicLong();
        Deadline.Ticker ticker = new Deadline.Ticker() {
            @Override
            public long nanoTime() {
                return now.get();
            }
        };
        Deadline d = Deadline.after(300, TimeUnit.MILLISECONDS, ticker);
        long sent = TimeUnit.MILLISECONDS.toNanos(300);
        assertFalse(Failures.refusedAtItsDeadline(d, sent), "300 ms left");
        now.set(TimeUnit.MILLISECONDS.toNanos(288));
        assertFalse(Failures.refusedAtItsDeadline(d, sent), "12 ms left");
        now.set(TimeUnit.MILLISECONDS.toNanos(290));
        assertTrue(Failures.refusedAtItsDeadline(d, sent), "10 ms left");
        Deadline longer = Deadline.after(10, TimeUnit.SECONDS, ticker);
        long sentLonger = TimeUnit.SECONDS.toNanos(10);
        now.set(TimeUnit.MILLISECONDS.toNanos(290 + 9_890));
        assertFalse(Failures.refusedAtItsDeadline(longer, sentLonger), "110 ms left");
        now.set(TimeUnit.MILLISECONDS.toNanos(290 + 9_900));
        assertTrue(Failures.refusedAtItsDeadline(longer, sentLonger), "100 ms left");
        assertFalse(Failures.refusedAtItsDeadline(null, sent), "no deadline");
        assertFalse(Failures.refusedAtItsDeadline(d, Frame.NO_TIMEOUT), "OPEN carried none");
    }
}
