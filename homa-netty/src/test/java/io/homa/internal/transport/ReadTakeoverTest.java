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
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.unix.FileDescriptor;
import io.netty.util.concurrent.ThreadAwareExecutor;
import io.netty.channel.epoll.Epoll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link ReadTakeover}'s wrapping of the channels' handles, on a stand-in for Netty's epoll handler
 * (no sockets): which events the loop's own reader is offered first, and that everything else
 * reaches the channel as Netty would deliver it.
 */
@org.junit.jupiter.api.extension.ExtendWith(io.homa.LeakCheck.class)
class ReadTakeoverTest {
    private static final int FD = 1_000_000; // never opened: the handle only reports it

    @BeforeAll
    static void epollOnly() {
        // Netty's epoll classes (the events' values) need its native library: absent in the NIO run.
        assumeTrue(Epoll.isAvailable(), "Netty's native epoll is not loaded in this run (NIO)");
    }

    /** Netty's handler, reduced to what the wrapper touches: it keeps the handle it was given. */
    private static final class StandInHandler implements IoHandler {
        IoHandle registered;

        @Override
        public int run(IoHandlerContext context) {
            return 0;
        }

        @Override
        public IoRegistration register(IoHandle handle) {
            registered = handle;
            return new IoRegistration() {
                @Override
                public <T> T attachment() {
                    return null;
                }

                @Override
                public long submit(IoOps ops) {
                    return 0;
                }

                @Override
                public boolean isValid() {
                    return true;
                }

                @Override
                public boolean cancel() {
                    return true;
                }
            };
        }

        @Override
        public void wakeup() {
        }

        @Override
        public boolean isCompatible(Class<? extends IoHandle> handleType) {
            return true;
        }
    }

    /** A channel's handle that records what reaches it. */
    private static final class Channel implements EpollIoHandle {
        final List<Integer> events = new ArrayList<>();
        final List<String> calls = new ArrayList<>();

        @Override
        public FileDescriptor fd() {
            return new FileDescriptor(FD);
        }

        @Override
        public void handle(IoRegistration registration, IoEvent event) {
            events.add(((EpollIoEvent) event).ops().value());
        }

        @Override
        public void registered() {
            calls.add("registered");
        }

        @Override
        public void unregistered() {
            calls.add("unregistered");
        }

        @Override
        public void close() {
            calls.add("close");
        }
    }

    private static EpollIoEvent event(EpollIoOps... ops) {
        EpollIoOps all = EpollIoOps.NONE;
        for (EpollIoOps o : ops) {
            all = all.with(o);
        }
        EpollIoOps value = all;
        return () -> value;
    }

    private final StandInHandler netty = new StandInHandler();
    private final Channel channel = new Channel();
    private final ReadTakeover takeover;
    private final IoRegistration registration;

    ReadTakeoverTest() throws Exception {
        Map<ThreadAwareExecutor, ReadTakeover> made = ReadTakeover.newRegistry();
        IoHandlerFactory factory = ReadTakeover.factory(new IoHandlerFactory() {
            @Override
            public IoHandler newHandler(ThreadAwareExecutor loop) {
                return netty;
            }

            @Override
            public boolean isChangingThreadSupported() {
                return false;
            }
        }, made);
        ThreadAwareExecutor loop = new ThreadAwareExecutor() {
            @Override
            public boolean isExecutorThread(Thread thread) {
                return true;
            }

            @Override
            public void execute(Runnable command) {
                command.run();
            }
        };
        factory.newHandler(loop);
        takeover = made.get(loop);
        registration = takeover.register(channel);
    }

    private void deliver(EpollIoEvent e) {
        ((IoHandle) netty.registered).handle(registration, e);
    }

    @Test
    void withoutAReaderEveryEventReachesTheChannel() {
        deliver(event(EpollIoOps.EPOLLIN));
        deliver(event(EpollIoOps.EPOLLOUT));
        assertEquals(List.of(EpollIoOps.EPOLLIN.value(), EpollIoOps.EPOLLOUT.value()), channel.events);
    }

    @Test
    void aReadableEventGoesToTheReaderFirst() {
        List<String> offered = new ArrayList<>();
        boolean[] reads = {true};
        takeover.readFirst(FD, () -> {
            offered.add("in");
            return reads[0];
        });
        deliver(event(EpollIoOps.EPOLLIN));
        assertEquals(List.of("in"), offered);
        assertTrue(channel.events.isEmpty(), "the reader read it: Netty must not read too " + channel.events);
        reads[0] = false;
        deliver(event(EpollIoOps.EPOLLIN));
        assertEquals(List.of("in", "in"), offered);
        assertEquals(List.of(EpollIoOps.EPOLLIN.value()), channel.events, "the reader left it: Netty reads");
    }

    @Test
    void errorsWritabilityAndHangUpsGoStraightToTheChannel() {
        List<String> offered = new ArrayList<>();
        takeover.readFirst(FD, () -> {
            offered.add("in");
            return true;
        });
        EpollIoEvent inErr = event(EpollIoOps.EPOLLIN, EpollIoOps.EPOLLERR);
        EpollIoEvent inOut = event(EpollIoOps.EPOLLIN, EpollIoOps.EPOLLOUT);
        EpollIoEvent inHup = event(EpollIoOps.EPOLLIN, EpollIoOps.EPOLLRDHUP);
        deliver(inErr);
        deliver(inOut);
        deliver(inHup);
        assertTrue(offered.isEmpty(), "only a readable-only event is the reader's: " + offered);
        assertEquals(List.of(inErr.ops().value(), inOut.ops().value(), inHup.ops().value()), channel.events);
    }

    @Test
    void aFailingReaderLeavesTheSocketToNettyForGood() {
        int[] offered = {0};
        takeover.readFirst(FD, () -> {
            offered[0]++;
            throw new IllegalStateException("reader bug");
        });
        deliver(event(EpollIoOps.EPOLLIN));
        deliver(event(EpollIoOps.EPOLLIN));
        assertEquals(1, offered[0], "a reader that failed is not asked again");
        assertEquals(List.of(EpollIoOps.EPOLLIN.value(), EpollIoOps.EPOLLIN.value()), channel.events);
    }

    @Test
    void theHandleHandsOnItsLifeCycle() throws Exception {
        IoHandle wrapped = netty.registered;
        assertTrue(wrapped instanceof EpollIoHandle);
        assertEquals(FD, ((EpollIoHandle) wrapped).fd().intValue());
        wrapped.registered();
        wrapped.unregistered();
        wrapped.close();
        assertEquals(List.of("registered", "unregistered", "close"), channel.calls);
    }
}
