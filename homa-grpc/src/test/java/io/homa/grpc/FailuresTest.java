package io.homa.grpc;

import io.grpc.Status;
import io.homa.HomaOutcomeUnknownException;
import io.homa.HomaOverloadedException;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
}
