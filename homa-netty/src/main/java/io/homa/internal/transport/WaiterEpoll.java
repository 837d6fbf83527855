package io.homa.internal.transport;

import io.netty.channel.epoll.EpollEventArray;
import io.netty.channel.epoll.Native;
import io.netty.channel.unix.FileDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * An epoll instance of its own for a thread that waits for its call's response on a loop's
 * sockets ({@code HomaConfig.callerReads}): it watches the sockets (level-triggered, while the
 * loop's own epoll instance leaves their data to it, {@link ReadTakeover}) and an
 * eventfd by which another thread wakes the waiter when it completed the call itself
 * ({@link #kick}). One thread waits here at a time ({@link #enter}, {@link #leave}).
 *
 * <p>Netty's epoll transport has the system calls but keeps the event array and the wait with a
 * timeout package-private, so reflection reaches them; {@link #UNAVAILABLE} says why it cannot
 * (on the module path Netty's epoll package must be opened to module {@code io.homa}), and
 * callers then park as before. The descriptors are closed by {@link #close} or, when a waiter is
 * inside then, by that waiter as it leaves, so that nobody waits on a descriptor number the
 * process may already have reused.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class WaiterEpoll {
    private static final Logger log = LoggerFactory.getLogger(WaiterEpoll.class);
    /** Events one wait takes at most: the kick and a few sockets. */
    private static final int MAX_EVENTS = 16;
    private static final MethodHandle NEW_EVENTS;
    private static final MethodHandle WAIT;
    private static final MethodHandle FD;
    private static final MethodHandle FREE;
    /** Why a caller cannot wait on the sockets itself here (null when it can). */
    public static final String UNAVAILABLE;

    static {
        MethodHandle newEvents = null, wait = null, fd = null, free = null;
        String why = null;
        try {
            MethodHandles.Lookup arrays = MethodHandles.privateLookupIn(EpollEventArray.class, MethodHandles.lookup());
            newEvents = arrays.findConstructor(EpollEventArray.class, MethodType.methodType(void.class, int.class));
            fd = arrays.findVirtual(EpollEventArray.class, "fd", MethodType.methodType(int.class, int.class));
            free = arrays.findVirtual(EpollEventArray.class, "free", MethodType.methodType(void.class));
            MethodHandles.Lookup natives = MethodHandles.privateLookupIn(Native.class, MethodHandles.lookup());
            wait = natives.findStatic(Native.class, "epollWait", MethodType.methodType(int.class,
                    FileDescriptor.class, EpollEventArray.class, int.class));
        } catch (Throwable t) { // IllegalAccessException on the module path without --add-opens; another Netty
            why = t.toString();
        }
        NEW_EVENTS = newEvents;
        WAIT = wait;
        FD = fd;
        FREE = free;
        UNAVAILABLE = why;
    }

    private final FileDescriptor epollFd;
    private final FileDescriptor kickFd;
    private final EpollEventArray events;
    /** Guarded by this: a thread is inside; closing was asked; the descriptors are closed. */
    private boolean inside;
    private boolean closing;
    private boolean closed;

    private WaiterEpoll(FileDescriptor epollFd, FileDescriptor kickFd, EpollEventArray events) {
        this.epollFd = epollFd;
        this.kickFd = kickFd;
        this.events = events;
    }

    /**
     * An epoll instance watching {@code sockets} (readable) and a kick, or null (logged) where
     * it cannot be made.
     */
    public static WaiterEpoll watching(int[] sockets) {
        if (UNAVAILABLE != null) {
            return null;
        }
        FileDescriptor epollFd = null;
        FileDescriptor kickFd = null;
        try {
            epollFd = Native.newEpollCreate();
            kickFd = Native.newEventFd();
            // Edge-triggered: one event per kick, and nobody needs to read the counter.
            Native.epollCtlAdd(epollFd.intValue(), kickFd.intValue(), Native.EPOLLIN | Native.EPOLLET);
            for (int fd : sockets) {
                Native.epollCtlAdd(epollFd.intValue(), fd, Native.EPOLLIN);
            }
            return new WaiterEpoll(epollFd, kickFd, (EpollEventArray) NEW_EVENTS.invokeExact(MAX_EVENTS));
        } catch (Throwable t) {
            log.debug("no epoll instance for waiting callers", t);
            closeQuietly(epollFd);
            closeQuietly(kickFd);
            return null;
        }
    }

    /** Makes the calling thread the one waiter, unless there is one or it is closing; then {@link #leave} in a finally. */
    public synchronized boolean enter() {
        if (inside || closing) {
            return false;
        }
        inside = true;
        return true;
    }

    /** The waiter is done (and closes the descriptors if {@link #close} came meanwhile). */
    public synchronized void leave() {
        inside = false;
        if (closing) {
            closeNow();
        }
    }

    /** Whether {@link #close} was asked: the waiter must leave. */
    public synchronized boolean closing() {
        return closing;
    }

    /**
     * Waits up to {@code timeoutMillis} for a socket to be readable or a kick (the waiter, inside).
     * Returns how many events there are ({@link #fd}), 0 if none came, -1 if waiting failed.
     */
    public int await(int timeoutMillis) {
        try {
            return (int) WAIT.invokeExact(epollFd, events, timeoutMillis);
        } catch (Throwable t) {
            log.debug("waiting on the sockets failed", t);
            return -1;
        }
    }

    /** The descriptor of the {@code i}-th event of the last {@link #await} (a socket's, or the kick's). */
    public int fd(int i) {
        try {
            return (int) FD.invokeExact(events, i);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Wakes the waiter (any thread); nothing once closed. A kick nobody waits for wakes the next wait once, for nothing. */
    public void kick() {
        synchronized (this) {
            if (!closed) {
                Native.eventFdWrite(kickFd.intValue(), 1L);
            }
        }
    }

    /** Closes the descriptors now, or has the waiter inside close them as it leaves (kicked out). */
    public void close() {
        synchronized (this) {
            closing = true;
            if (inside) {
                Native.eventFdWrite(kickFd.intValue(), 1L);
                return;
            }
            closeNow();
        }
    }

    private void closeNow() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            FREE.invokeExact(events);
        } catch (Throwable t) {
            log.debug("freeing an epoll event array failed", t);
        }
        closeQuietly(kickFd);
        closeQuietly(epollFd);
    }

    private static void closeQuietly(FileDescriptor fd) {
        if (fd != null) {
            try {
                fd.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }
}
