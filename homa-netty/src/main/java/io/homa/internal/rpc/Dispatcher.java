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
 * <p>Requests waiting for their handler to start wait in the socket's {@link RequestQueue}
 * (whatever the executor): at most {@code HomaConfig.maxQueuedRequests()} of them, each for no
 * longer than its deadline, and under overload newest first and no longer than the queue's target,
 * so that a slow application neither holds an unbounded queue nor works through one for callers
 * that gave up long ago. Each queued request hands the executor one task, which runs whichever
 * request the queue says is next.
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
    /** Calls completed on the thread that waited for them (ShellCounter.CALLER_COMPLETIONS). */
    private final LongAdder callerCompletions = new LongAdder();
    /** Our own pool, which close() stops; null when the executor is the user's or inline. */
    private final ExecutorService ownPool;
    private final MarkingThreadFactory marker;
    private final RequestQueue queue;
    /** The executor task of every queued request (one object: it runs whichever the queue gives). */
    private final Runnable runNext = this::runNext;

    private Dispatcher(Executor executor, ExecutorService ownPool, MarkingThreadFactory marker, ShellConfig config,
                       int parallelism) {
        this.executor = executor;
        this.inline = executor == INLINE;
        this.ownPool = ownPool;
        this.marker = marker;
        this.queue = new RequestQueue(config.maxQueuedRequests(), config.queueTarget().toNanos(),
                config.queueInterval().toNanos(), parallelism);
    }

    /** Inline execution's executor: the calling thread. */
    private static final Executor INLINE = Runnable::run;

    public static Dispatcher create(ShellConfig config, int socketSerial) {
        if (config.inlineExecution()) {
            return new Dispatcher(INLINE, null, null, config, 1);
        }
        if (config.executor() != null) {
            return new Dispatcher(config.executor(), null, null, config, 0);
        }
        MarkingThreadFactory marker = new MarkingThreadFactory("homa-exec-" + socketSerial);
        ThreadPoolExecutor pool = new ThreadPoolExecutor(config.executorThreads(), config.executorThreads(),
                10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), marker);
        pool.allowCoreThreadTimeOut(true);
        return new Dispatcher(pool, pool, marker, config, config.executorThreads());
    }

    /** Whether handlers run on the event loop, as the request arrives (inline execution), not from a queue. */
    public boolean inline() {
        return inline;
    }

    /**
     * Hands an admitted request to its handler (on the request's event loop): at once with inline
     * execution, else through the queue; false if {@code maxQueuedRequests} wait already (the caller
     * refuses it as OVERLOADED). Queued requests the queue will not serve (under overload, those
     * that waited past its target or their deadline; overload or not, one that the work in front
     * of it would outlast, {@code r} itself included) are refused or dropped here, through their
     * paths.
     * {@code r.deadline} is set: no handler starts for it once that time has passed.
     */
    public boolean submit(RequestHandler handler, InboundRequest r, long now) {
        if (inline) { // no queue, so no pace to measure: just the deadline
            if (now - r.deadline >= 0) {
                r.expired();
                r.skipped();
            } else if (r.markStarted()) {
                handle(handler, r);
            }
            return true;
        }
        r.handler = handler;
        if (!queue.offer(r, now)) {
            return false;
        }
        InboundRequest stale;
        while ((stale = queue.pollStale(now)) != null) {
            act(stale, now);
        }
        execute(runNext);
        return true;
    }

    /** One queued request's task (an executor thread): runs the next request the queue gives, refusing stale ones. */
    private void runNext() {
        long now = System.nanoTime();
        InboundRequest r;
        while ((r = queue.take(now)) != null) {
            // The thread is free: the request it took goes first (never shed: that would idle the
            // thread); then the stale end of the queue is refused, so that when no new request
            // arrives to do it, old ones are still refused while their callers listen.
            InboundRequest stale;
            while ((stale = queue.pollStale(now)) != null) {
                act(stale, now);
            }
            if (act(r, now)) {
                return;
            }
        }
    }

    /** Carries out {@code r.queueVerdict()}; true if it ran the handler. */
    private boolean act(InboundRequest r, long now) {
        switch (r.queueVerdict()) {
            case RequestQueue.RUN -> {
                if (!r.markStarted()) { // its deadline timer fired meanwhile: it expired
                    r.skipped();
                    return false;
                }
                queue.started();
                long start = System.nanoTime(); // the handler's own time: not the queue's work before it
                try {
                    handle(r.handler, r);
                } finally {
                    long end = System.nanoTime();
                    queue.served(end - start);
                    queue.completed(end);
                }
                return true;
            }
            case RequestQueue.EXPIRED -> {
                r.expired();
                r.skipped();
            }
            case RequestQueue.SHED -> r.shed(now - r.queuedAt);
            default -> r.skipped(); // GONE: dropped or cancelled while it waited
        }
        return false;
    }

    private void handle(RequestHandler handler, InboundRequest r) {
        r.handler = null;
        try {
            handler.handle(r);
        } catch (Throwable t) {
            log.warn("Homa handler failed on {}; the request is dropped and its caller will fail", r, t);
            r.drop("the handler threw " + t);
        }
    }

    /** Requests waiting for a handler thread now. */
    public int queuedRequests() {
        return queue.size();
    }

    /** The most requests that ever waited for their handler at once. */
    public long queuedRequestsHighWater() {
        return queue.highWater();
    }

    /** Adds the queue-delay histogram of the requests whose handler started (see {@link RequestQueue#addDelays}). */
    public void addQueueDelays(long[] into) {
        queue.addDelays(into);
    }

    /**
     * Completes a call with its response on the user-code executor (inline: here, with no task
     * object); or, when this thread waits for the call and read the response itself, on this
     * thread after its turn ({@link ClientCall#deferCompletion}): an application thread, never
     * the loop, and no hand-off.
     */
    public void succeed(ClientCall<?> c, ReceivedMessage response) {
        if (inline) {
            try {
                c.succeed(response);
            } catch (Throwable t) {
                log.warn("user code failed", t);
            }
        } else if (c.waitedOnBy(Thread.currentThread())) {
            callerCompletions.increment();
            c.deferCompletion(response, null);
        } else {
            execute(() -> c.succeed(response));
        }
    }

    /** Fails a call as {@link #succeed} completes one. */
    public void fail(ClientCall<?> c, RuntimeException failure) {
        if (!inline && c.waitedOnBy(Thread.currentThread())) {
            callerCompletions.increment();
            c.deferCompletion(null, failure);
        } else {
            execute(() -> c.fail(failure));
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

    /** Calls completed on their waiting thread instead of the executor so far ({@link #succeed}). */
    public long callerCompletions() {
        return callerCompletions.sum();
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
