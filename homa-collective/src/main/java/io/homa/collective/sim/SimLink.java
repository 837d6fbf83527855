package io.homa.collective.sim;

import io.homa.collective.internal.Link;
import io.homa.core.EngineEvent;
import io.homa.core.ReceivedMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A rank's {@link Link} on a simulated host: each segment is an RPC of the host's real engine (as
 * {@code HomaLink} makes it on a socket), in virtual time, on the simulation's one thread. With
 * {@code headersOnly}, arriving messages are read for their header alone (synthetic payloads at
 * scale: the bytes still cross the simulated network, but are not copied out of the engine).
 */
final class SimLink implements Link {
    /** The calls a simulated host offers (SimHost and DatacenterHost differ in their signatures). */
    interface Host {
        long call(InetSocketAddress server, ByteBuffer request);

        void respond(InetSocketAddress client, long rpcId, ByteBuffer response);

        void onEvent(Consumer<EngineEvent> handler);

        /** The handler events go to before this link's (it gets the events that are not the link's). */
        Consumer<EngineEvent> previousHandler();
    }

    /** Virtual time and timers. */
    interface Clock {
        long now();

        void schedule(long at, Runnable task);
    }

    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);
    private static final int MAGIC = 0xC7; // MessageHeader's first byte
    private final Host host;
    private final Clock clock;
    private final InetSocketAddress[] members;
    private final boolean headersOnly;
    private final Map<Long, SendCallback> calls = new HashMap<>();
    private boolean closed;

    SimLink(Host host, Clock clock, InetSocketAddress[] members, boolean headersOnly) {
        this.host = host;
        this.clock = clock;
        this.members = members;
        this.headersOnly = headersOnly;
    }

    @Override
    public void start(Inbound inbound) {
        Consumer<EngineEvent> others = host.previousHandler();
        host.onEvent(e -> {
            if (!ours(e)) {
                others.accept(e); // another driver's RPCs on the same host (a workload beside the collective)
                return;
            }
            switch (e.kind()) {
                case REQUEST -> {
                    ReceivedMessage m = e.message();
                    ByteBuf b = copy(m, headersOnly ? io.homa.collective.internal.MessageHeader.LENGTH : m.length());
                    m.release();
                    InetSocketAddress peer = e.peer();
                    long id = e.rpcId();
                    inbound.deliver(b, new Reply() {
                        @Override
                        public void ok() {
                            host.respond(peer, id, EMPTY);
                        }

                        @Override
                        public void refuse(String reason) {
                            host.respond(peer, id, ByteBuffer.wrap(reason.getBytes(StandardCharsets.UTF_8)));
                        }
                    });
                }
                case RESPONSE -> {
                    ReceivedMessage m = e.message();
                    String reason = m.length() == 0 ? null : new String(m.toByteArray(), StandardCharsets.UTF_8);
                    m.release();
                    SendCallback c = calls.remove(e.rpcId());
                    if (c != null) {
                        c.done(null, reason);
                    }
                }
                case FAILED -> {
                    SendCallback c = calls.remove(e.rpcId());
                    if (c != null) {
                        c.done(new IllegalStateException("the simulated RPC failed: " + e.error()), null);
                    }
                }
                default -> { }
            }
        });
    }

    /** A request that starts with the collective header's magic, or the answer to a call of this link. */
    private boolean ours(EngineEvent e) {
        return switch (e.kind()) {
            case REQUEST -> {
                ReceivedMessage m = e.message();
                if (m.length() == 0) {
                    yield false;
                }
                ByteBuffer first = m.buffers()[0];
                yield first.remaining() > 0 && (first.get(first.position()) & 0xFF) == MAGIC;
            }
            case RESPONSE, FAILED -> calls.containsKey(e.rpcId());
            default -> false;
        };
    }

    private static ByteBuf copy(ReceivedMessage m, int bytes) {
        int n = Math.min(bytes, m.length());
        ByteBuf b = Unpooled.buffer(n);
        for (ByteBuffer part : m.buffers()) {
            if (b.writableBytes() == 0) {
                break;
            }
            int take = Math.min(part.remaining(), b.writableBytes());
            part.limit(part.position() + take);
            b.writeBytes(part);
        }
        return b;
    }

    @Override
    public void send(int peer, ByteBuf message, long timeoutNanos, SendCallback callback) {
        ByteBuffer request = ByteBuffer.allocate(message.readableBytes());
        message.readBytes(request);
        message.release();
        request.flip();
        if (closed) {
            callback.done(new IllegalStateException("the group is closed"), null);
            return;
        }
        long id;
        try {
            id = host.call(members[peer], request);
        } catch (RuntimeException e) {
            callback.done(e, null);
            return;
        }
        calls.put(id, callback);
    }

    @Override
    public Timer schedule(long delayNanos, Runnable task) {
        boolean[] cancelled = new boolean[1];
        clock.schedule(clock.now() + delayNanos, () -> {
            if (!cancelled[0]) {
                task.run();
            }
        });
        return () -> cancelled[0] = true;
    }

    @Override
    public long nanoTime() {
        return clock.now();
    }

    @Override
    public ByteBufAllocator alloc() {
        return UnpooledByteBufAllocator.DEFAULT;
    }

    @Override
    public void close() {
        closed = true;
    }
}
