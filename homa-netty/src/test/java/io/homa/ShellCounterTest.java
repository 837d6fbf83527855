package io.homa;

import io.homa.internal.Failure;
import io.homa.internal.observe.ShellCounter;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * The shell names neither {@link HomaMetrics.Shell} nor the exceptions (the API sits above it):
 * it counts by {@link ShellCounter} and fails by {@link Failure}. These hold each pair together.
 */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class ShellCounterTest {
    @Test
    void shellCounters_matchTheApisCounters_oneForOne_inOrder() {
        assertEquals(Arrays.stream(HomaMetrics.Shell.values()).map(Enum::name).toList(),
                Arrays.stream(ShellCounter.values()).map(Enum::name).toList());
    }

    @Test
    void everyFailure_becomesTheExceptionOfItsKind() {
        assertEquals(Arrays.stream(HomaException.Kind.values()).map(Enum::name).toList(),
                Arrays.stream(Failure.values()).map(Enum::name).toList());
        for (Failure f : Failure.values()) {
            Throwable cause = new IllegalStateException("cause");
            HomaException e = Errors.create(f, "what happened", cause);
            assertEquals(f.name(), e.kind().name());
            assertEquals("what happened", e.getMessage());
            assertEquals(cause, e.getCause(), f + " keeps its cause");
        }
        assertInstanceOf(HomaTimeoutException.class, Errors.create(Failure.TIMEOUT, "t", null));
        assertInstanceOf(HomaClosedException.class, Errors.create(Failure.SOCKET_CLOSED, "c", null));
        assertInstanceOf(HomaOverloadedException.class, Errors.create(Failure.OVERLOADED, "o", null));
        assertInstanceOf(HomaUnknownRpcException.class, Errors.create(Failure.UNKNOWN_RPC, "u", null));
        assertInstanceOf(HomaMessageTooLargeException.class, Errors.create(Failure.MESSAGE_TOO_LARGE, "m", null));
        assertInstanceOf(HomaBadArgumentException.class, Errors.create(Failure.BAD_ARGUMENT, "b", null));
    }
}
