package io.homa.internal.loop;

import io.netty.channel.EventLoop;
import io.netty.util.internal.PlatformDependent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Queue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * Commands from other threads (start a call, send a reply, a datagram read by another loop) to
 * one event loop: a lock-free queue plus one wake-up task, submitted only when the queue was
 * idle. So a burst of commands costs the loop one task, and the engine is drained (and the
 * sockets flushed) once for the whole burst. This also keeps Netty's task queue short, which
 * matters because Netty looks at its scheduled tasks (our timers) only between task batches.
 */
final class CommandQueue {
    private static final Logger log = LoggerFactory.getLogger(CommandQueue.class);

    /** Netty's multi-producer array queue: unlike a linked queue, no node per command. */
    private final Queue<Runnable> queue = PlatformDependent.newMpscQueue();
    private final AtomicBoolean wakeupPending = new AtomicBoolean();
    /** Wake-up tasks handed to the loop (ShellCounter.LOOP_HANDOFFS); other threads add to it. */
    private final LongAdder handoffs = new LongAdder();
    private final EventLoop loop;
    private final Runnable batch;

    /** @param batch runs on the loop when commands are waiting; it calls {@link #runAll()} */
    CommandQueue(EventLoop loop, Runnable batch) {
        this.loop = loop;
        this.batch = () -> {
            wakeupPending.set(false); // before polling: a command added from now on wakes us again
            batch.run();
        };
    }

    /** Queues a command (any thread). After the loop has ended it waits for {@link #runAll()}. */
    void submit(Runnable command) {
        queue.add(command);
        if (wakeupPending.compareAndSet(false, true)) {
            handoffs.increment();
            try {
                loop.execute(batch);
            } catch (RejectedExecutionException e) {
                // The loop is shutting down: the socket's close runs what is left.
            }
        }
    }

    /**
     * Whether the loop is due to run the queue (a wake-up task is pending): a command added now
     * joins that batch at no extra cost. Any thread; a hint, as it may change at once.
     */
    boolean loopDue() {
        return wakeupPending.get();
    }

    /** Wake-ups handed to the loop so far: each is one thread hand-off. */
    long handoffs() {
        return handoffs.sum();
    }

    /** Runs every queued command (on the loop, or on the closing thread after the loop ended). */
    void runAll() {
        Runnable c;
        while ((c = queue.poll()) != null) {
            try {
                c.run();
            } catch (RuntimeException e) {
                log.warn("Homa command failed", e);
            }
        }
    }
}
