package io.homa.internal.transport;

import io.netty.channel.IoEvent;
import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoOps;
import io.netty.channel.IoRegistration;
import io.netty.channel.epoll.EpollIoEvent;
import io.netty.channel.epoll.EpollIoHandle;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.unix.FileDescriptor;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.collection.IntObjectMap;
import io.netty.util.concurrent.ThreadAwareExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;

/**
 * An epoll event loop's I/O handler (Netty's {@link EpollIoHandler}, which does all the work)
 * whose channels' read interest another thread may take over for a while: a caller blocked on its
 * call waits for its response on the sockets itself ({@code HomaConfig.callerReads},
 * {@link WaiterEpoll}) and meanwhile the loop's epoll instance does not watch them for data,
 * so that a datagram wakes that caller and not the loop too. Netty registers its channels
 * level-triggered, and epoll wakes every instance that watches a readable socket: without the
 * take-over both threads would wake for each response.
 *
 * <p>Each registration the loop makes is wrapped ({@link Registration}): it remembers the
 * interest Netty asked for last and, while its socket is taken over, passes it on without
 * {@code EPOLLIN}; giving the socket back restores what Netty asked for. Both are one
 * {@code epoll_ctl} on the loop's epoll instance, which the kernel allows from any thread and
 * Netty's registration serializes; nothing else of the loop changes (its timers, tasks,
 * writability and errors stay its own). A socket given back with data waiting is readable at
 * once for the loop (level-triggered).
 *
 * <p>The loop may also take a socket's reads from Netty ({@link #readFirst}): each handle the
 * loop registers is wrapped too ({@link Handle}), and an event that says only "readable" is
 * offered to the shell's reader first; Netty's read runs only if the reader left it.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class ReadTakeover implements IoHandler {
    private static final Logger log = LoggerFactory.getLogger(ReadTakeover.class);
    private final IoHandler delegate;
    /** The loop's registrations by file descriptor (registered and cancelled on the loop; read by takers under the lock). */
    private final IntObjectMap<Registration> byFd = new IntObjectHashMap<>();

    private ReadTakeover(IoHandler delegate) {
        this.delegate = delegate;
    }

    /**
     * Netty's epoll handler factory with its handlers wrapped; {@code made} learns each loop's
     * handler (by the loop, as the executor Netty gives the factory).
     */
    static IoHandlerFactory factory(IoHandlerFactory epoll, Map<ThreadAwareExecutor, ReadTakeover> made) {
        return new IoHandlerFactory() {
            @Override
            public IoHandler newHandler(ThreadAwareExecutor loop) {
                ReadTakeover h = new ReadTakeover(epoll.newHandler(loop));
                made.put(loop, h);
                return h;
            }

            @Override
            public boolean isChangingThreadSupported() {
                return epoll.isChangingThreadSupported();
            }
        };
    }

    /** A map for {@link #factory}. */
    static Map<ThreadAwareExecutor, ReadTakeover> newRegistry() {
        return new ConcurrentHashMap<>();
    }

    /**
     * Takes ({@code true}) or gives back the read interest of the loop's sockets {@code fds}
     * (any thread; a socket the loop no longer has is skipped).
     */
    public void take(int[] fds, boolean take) {
        for (int fd : fds) {
            Registration r;
            synchronized (byFd) {
                r = byFd.get(fd);
            }
            if (r != null) {
                try {
                    r.taken(take);
                } catch (RuntimeException e) { // the channel closing meanwhile: the others still count
                    log.debug("read interest of fd {} not {}", fd, take ? "taken" : "given back", e);
                }
            }
        }
    }

    /**
     * From now on, when the loop wakes because socket {@code fd} is readable (and for nothing
     * else), {@code read} runs first, on the loop: true when it read the socket itself, so that
     * Netty's read is left out; false lets Netty read as usual. A socket the loop no longer has is
     * skipped.
     */
    public void readFirst(int fd, BooleanSupplier read) {
        Registration r;
        synchronized (byFd) {
            r = byFd.get(fd);
        }
        if (r != null) {
            r.handle.readFirst = read;
        }
    }

    // ------------------------------------------------------------------ IoHandler, on the loop

    @Override
    public IoRegistration register(IoHandle handle) throws Exception {
        if (!(handle instanceof EpollIoHandle e)) {
            return delegate.register(handle);
        }
        Handle h = new Handle(e);
        IoRegistration inner = delegate.register(h);
        Registration r = new Registration(inner, e.fd().intValue(), h);
        synchronized (byFd) {
            byFd.put(r.fd, r);
        }
        return r;
    }

    @Override
    public void initialize() {
        delegate.initialize();
    }

    @Override
    public int run(IoHandlerContext context) {
        return delegate.run(context);
    }

    @Override
    public void prepareToDestroy() {
        delegate.prepareToDestroy();
    }

    @Override
    public void destroy() {
        delegate.destroy();
    }

    @Override
    public void wakeup() {
        delegate.wakeup();
    }

    @Override
    public boolean isCompatible(Class<? extends IoHandle> handleType) {
        return delegate.isCompatible(handleType);
    }

    /**
     * A channel's handle, as Netty's loop sees it: the channel's own, with a "readable" event
     * offered to {@link #readFirst} first (on the loop). Only an event of {@code EPOLLIN} alone is:
     * errors, hang-ups and writability go to the channel as they come. (Netty's handler counts
     * the channels it has by the class of their handles, so it does not count these; only its
     * legacy {@code EpollEventLoop} reads that count.)
     */
    private static final class Handle implements EpollIoHandle {
        private final EpollIoHandle channel;
        volatile BooleanSupplier readFirst;

        Handle(EpollIoHandle channel) {
            this.channel = channel;
        }

        @Override
        public FileDescriptor fd() {
            return channel.fd();
        }

        @Override
        public void handle(IoRegistration registration, IoEvent event) {
            BooleanSupplier read = readFirst;
            if (read != null && event instanceof EpollIoEvent e && e.ops().value() == EpollIoOps.EPOLLIN.value()) {
                try {
                    if (read.getAsBoolean()) {
                        return;
                    }
                } catch (Throwable ex) { // a reader's bug must not stall or end the loop: Netty reads from now on
                    if (ex instanceof VirtualMachineError fatal) {
                        throw fatal;
                    }
                    readFirst = null;
                    log.warn("Homa: reading fd {} before Netty failed; Netty reads it from now on", channel.fd().intValue(), ex);
                }
            }
            channel.handle(registration, event);
        }

        @Override
        public void registered() {
            channel.registered();
        }

        @Override
        public void unregistered() {
            channel.unregistered();
        }

        @Override
        public void close() throws Exception {
            channel.close();
        }
    }

    /** One channel's registration: Netty's, with its read interest masked while taken over. */
    private final class Registration implements IoRegistration {
        private final IoRegistration inner;
        final int fd;
        final Handle handle;
        /** What Netty asked for last (NONE until it asks). */
        private EpollIoOps wanted = EpollIoOps.NONE;
        private boolean taken;

        Registration(IoRegistration inner, int fd, Handle handle) {
            this.inner = inner;
            this.fd = fd;
            this.handle = handle;
        }

        @Override
        public synchronized long submit(IoOps ops) {
            wanted = (EpollIoOps) ops;
            return inner.submit(taken ? masked() : ops);
        }

        synchronized void taken(boolean take) {
            if (take == taken) {
                return;
            }
            taken = take;
            if (wanted.contains(EpollIoOps.EPOLLIN) && inner.isValid()) {
                inner.submit(take ? masked() : wanted);
            }
        }

        /** What Netty wants without reading (errors stay watched: Netty removes a registration of nothing). */
        private EpollIoOps masked() {
            EpollIoOps m = wanted.without(EpollIoOps.EPOLLIN);
            return m.value() == EpollIoOps.NONE.value() ? EpollIoOps.EPOLLERR : m;
        }

        @Override
        public <T> T attachment() {
            return inner.attachment();
        }

        @Override
        public boolean isValid() {
            return inner.isValid();
        }

        @Override
        public boolean cancel() {
            synchronized (byFd) {
                if (byFd.get(fd) == this) {
                    byFd.remove(fd);
                }
            }
            return inner.cancel();
        }
    }
}
