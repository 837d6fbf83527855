package io.homa.internal.rpc;

import io.homa.core.ReceivedMessage;
import io.homa.internal.ShellConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Where user code runs: handlers, and the completion of call futures (with whatever stages the
 * user chained on them). By default the socket's own pool, so that user code never stalls an
 * event loop; a user-given executor; or, with {@code HomaConfig.inlineExecution()}, the event loop
 * itself. Once the socket is closed and its pool stopped, work runs on the calling thread, so a
 * future is never left uncompleted.
 *
 * <p>Requests waiting for their handler to start are counted against
 * {@code HomaConfig.maxQueuedRequests()} (whatever the executor): the event loops refuse a request
 * that {@link #admitRequest()} does not admit, so a slow application cannot make the socket hold
 * an unbounded queue of requests.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class Dispatcher {
    private static final Logger log = LoggerFactory.getLogger(Dispatcher.class);

    private final Executor executor;
    /** Whether user code runs on the calling thread (inline execution): no hand-off. */
    private final boolean inline;
    /** Tasks handed to {@link #executor} (ShellCounter.EXECUTOR_HANDOFFS). */
    private final LongAdder handoffs = new LongAdder();
    /** Our own pool, which close() stops; null when the executor is the user's or inline. */
    private final ExecutorService ownPool;
    private final MarkingThreadFactory marker;
    private final int maxQueuedRequests;
    /** Requests admitted and not yet started by their handler task. */
    private final AtomicInteger queuedRequests = new AtomicInteger();
    /** The most requests ever queued at once. */
    private final AtomicInteger queuedHighWater = new AtomicInteger();

    private Dispatcher(Executor executor, ExecutorService ownPool, MarkingThreadFactory marker, int maxQueuedRequests) {
        this.executor = executor;
        this.inline = executor == INLINE;
        this.ownPool = ownPool;
        this.marker = marker;
        this.maxQueuedRequests = maxQueuedRequests;
    }

    /** Inline execution's executor: the calling thread. */
    private static final Executor INLINE = Runnable::run;

    public static Dispatcher create(ShellConfig config, int socketSerial) {
        if (config.inlineExecution()) {
            return new Dispatcher(INLINE, null, null, config.maxQueuedRequests());
        }
        if (config.executor() != null) {
            return new Dispatcher(config.executor(), null, null, config.maxQueuedRequests());
        }
        MarkingThreadFactory marker = new MarkingThreadFactory("homa-exec-" + socketSerial);
        ThreadPoolExecutor pool = new ThreadPoolExecutor(config.executorThreads(), config.executorThreads(),
                10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), marker);
        pool.allowCoreThreadTimeOut(true);
        return new Dispatcher(pool, pool, marker, config.maxQueuedRequests());
    }

    /**
     * Takes a place in the request queue (any thread); false when it is full. The handler task of
     * an admitted request must call {@link #requestStarted()} first thing.
     */
    public boolean admitRequest() {
        while (true) {
            int n = queuedRequests.get();
            if (n >= maxQueuedRequests) {
                return false;
            }
            if (queuedRequests.compareAndSet(n, n + 1)) {
                queuedHighWater.accumulateAndGet(n + 1, Math::max);
                return true;
            }
        }
    }

    /** An admitted request's handler task started: its place in the queue is free again. */
    public void requestStarted() {
        queuedRequests.decrementAndGet();
    }

    /** The most requests that ever waited for their handler at once. */
    public int queuedRequestsHighWater() {
        return queuedHighWater.get();
    }

    /**
     * Runs {@code handler} for an admitted request on the user-code executor (the task frees the
     * request's place in the queue first). A request that was dropped, or whose timeout
     * ({@code expiresAt}, a {@link System#nanoTime()} value) passed while it waited, is dropped
     * without running the handler and {@code skipped} runs instead; a handler that throws drops
     * its request. The same for requests received over Homa and over TCP.
     */
    public void runHandler(RequestHandler handler, InboundRequest r, long expiresAt, Runnable skipped) {
        if (inline) {
            handle(handler, r, expiresAt, skipped); // no task object: the loop runs it now
        } else {
            execute(() -> handle(handler, r, expiresAt, skipped));
        }
    }

    private void handle(RequestHandler handler, InboundRequest r, long expiresAt, Runnable skipped) {
        requestStarted();
        if (!r.isOpen() || System.nanoTime() - expiresAt >= 0) {
            // Dropped (timed out, socket closed) while it waited: its caller has been or will
            // be told so; running the handler now could only do work nobody waits for.
            r.drop("its request timeout passed before a handler thread was free");
            skipped.run();
            return;
        }
        try {
            handler.handle(r);
        } catch (Throwable t) {
            log.warn("Homa handler failed on {}; the request is dropped and its caller will fail", r, t);
            r.drop("the handler threw " + t);
        }
    }

    /** Completes a call with its response on the user-code executor (inline: here, with no task object). */
    public void succeed(ClientCall<?> c, ReceivedMessage response) {
        if (inline) {
            try {
                c.succeed(response);
            } catch (Throwable t) {
                log.warn("user code failed", t);
            }
        } else {
            execute(() -> c.succeed(response));
        }
    }

    /** Runs {@code task} on the user-code executor (or here, if that executor refuses it). */
    public void execute(Runnable task) {
        if (!inline) {
            handoffs.increment();
        }
        try {
            executor.execute(task);
        } catch (RejectedExecutionException e) {
            runHere(task);
        }
    }

    private static void runHere(Runnable task) {
        try {
            task.run();
        } catch (Throwable t) {
            log.warn("user code failed", t);
        }
    }

    /** Tasks handed to the executor so far (none inline): each is one thread hand-off. */
    public long handoffs() {
        return handoffs.sum();
    }

    /** Whether the current thread is one of our own pool's. */
    public boolean isOwnThread() {
        return marker != null && marker.mine.get();
    }

    /**
     * Stops our own pool after the work queued on it has run, waiting up to {@code timeoutMillis}
     * (0: not at all) for its threads to end, unless called from one of them. A user-given
     * executor is left alone.
     */
    public void shutdown(long timeoutMillis) {
        if (ownPool == null) {
            return;
        }
        ownPool.shutdown();
        if (isOwnThread() || timeoutMillis <= 0) {
            return;
        }
        long giveUp = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        try {
            if (!ownPool.awaitTermination(timeoutMillis, TimeUnit.MILLISECONDS)) {
                log.warn("Homa executor threads still busy {} ms after close (a handler is blocked?)", timeoutMillis);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        join(marker.threads, giveUp);
    }

    /** Waits until each thread (but the current one) has ended, or until {@code giveUpNanos}. */
    public static void join(Iterable<Thread> threads, long giveUpNanos) {
        for (Thread t : threads) {
            if (t == Thread.currentThread()) {
                continue;
            }
            long left = giveUpNanos - System.nanoTime();
            try {
                if (left <= 0 || !joined(t, left)) {
                    log.warn("Homa thread {} still alive after close", t.getName());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static boolean joined(Thread t, long nanos) throws InterruptedException {
        TimeUnit.NANOSECONDS.timedJoin(t, nanos);
        return !t.isAlive();
    }

    /** Makes daemon threads with a recognisable name and remembers which are ours. */
    private static final class MarkingThreadFactory implements ThreadFactory {
        private final String prefix;
        private final AtomicInteger next = new AtomicInteger();
        private final ThreadLocal<Boolean> mine = ThreadLocal.withInitial(() -> Boolean.FALSE);
        private final Set<Thread> threads = ConcurrentHashMap.newKeySet();

        MarkingThreadFactory(String prefix) {
            this.prefix = prefix;
        }

        @Override
        public Thread newThread(Runnable r) {
            Thread t = new Thread(() -> {
                mine.set(Boolean.TRUE);
                r.run();
            }, prefix + "-" + next.incrementAndGet());
            t.setDaemon(true);
            threads.removeIf(old -> !old.isAlive()); // idle threads time out and are replaced
            threads.add(t);
            return t;
        }
    }
}
