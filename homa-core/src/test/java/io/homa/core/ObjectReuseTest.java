package io.homa.core;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * The engine reuses the objects of ended RPCs and of their messages ({@link Rpc#init},
 * {@link IncomingMessage#init}, {@link OutgoingMessage#init}): a reused object must equal a new
 * one in every field, or state would leak from one RPC into the next. Every field is set to
 * something else first, so that a field added later and forgotten in {@code init} fails here.
 */
class ObjectReuseTest {
    private static final Peer PEER = new Peer(new InetSocketAddress("127.0.0.1", 4000));
    private static final Peer OTHER_PEER = new Peer(new InetSocketAddress("127.0.0.1", 4001));

    @Test
    void aReusedOutgoingMessageEqualsANewOneButKeepsItsRetransmitArrays() throws Exception {
        Rpc rpc = new Rpc(2, PEER, true);
        ByteBuffer payload = ByteBuffer.allocate(3000);
        OutgoingMessage fresh = new OutgoingMessage(rpc, payload, null, null, 3000, 9, 1000);
        OutgoingMessage reused = new OutgoingMessage(new Rpc(4, PEER, true), ByteBuffer.allocate(10), 1, 5);
        reused.queueRetransmit(0, 5, 1); // allocates the arrays a reused message keeps
        Set<String> kept = Set.of("rtStart", "rtEnd", "rtPriority");
        scribble(reused, kept);
        reused.clear();
        assertSame(reused, reused.init(rpc, payload, null, null, 3000, 9, 1000));
        assertSameFields(fresh, reused, kept);
    }

    @Test
    void aReusedRpcEqualsANewOne() throws Exception {
        Rpc fresh = new Rpc(2, PEER, true);
        Rpc reused = new Rpc(5, OTHER_PEER, false);
        scribble(reused, Set.of());
        assertSame(reused, reused.init(2, PEER, true));
        assertSameFields(fresh, reused, Set.of());
    }

    @Test
    void aReusedIncomingMessageEqualsANewOneWithItsRangesEmptied() throws Exception {
        Rpc rpc = new Rpc(3, PEER, false);
        IncomingMessage fresh = new IncomingMessage(rpc, 3000, 7);
        IncomingMessage reused = new IncomingMessage(new Rpc(9, OTHER_PEER, false), 5000, 2);
        reused.write(0, ByteBuffer.allocate(100), 0, 100);
        reused.write(1000, ByteBuffer.allocate(100), 0, 100); // a second interval: the range arrays
        scribble(reused, Set.of("ranges", "single"));
        scribble(reused.ranges, Set.of());
        Field single = IncomingMessage.class.getDeclaredField("single");
        single.setAccessible(true);
        ((PayloadBuffer[]) single.get(reused))[0] = new HeapPayloadMemory.Chunk(new byte[1]);
        assertSame(reused, reused.init(rpc, 3000, 7));
        assertSameFields(fresh, reused, Set.of("ranges", "single"));
        assertSameFields(fresh.ranges, reused.ranges, Set.of());
        assertEquals(null, ((PayloadBuffer[]) single.get(reused))[0], "the kept one-chunk table is emptied");
    }

    /** Sets every instance field but {@code except} to a value unlike a new object's. */
    private static void scribble(Object o, Set<String> except) throws Exception {
        for (Field f : o.getClass().getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers()) || except.contains(f.getName())) {
                continue;
            }
            f.setAccessible(true);
            Class<?> t = f.getType();
            Object before = f.get(o);
            if (t == long.class) {
                f.setLong(o, 123_456_789L);
            } else if (t == int.class) {
                f.setInt(o, 12_345);
            } else if (t == boolean.class) {
                f.setBoolean(o, !f.getBoolean(o));
            } else if (t == Rpc.class) {
                f.set(o, new Rpc(98, OTHER_PEER, true));
            } else if (t == Peer.class) {
                f.set(o, new Peer(new InetSocketAddress("127.0.0.1", 4002)));
            } else if (t == Rpc.State.class) {
                f.set(o, Rpc.State.DEAD);
            } else if (t == Rpc.Schedule.class) {
                f.set(o, Rpc.Schedule.PARKED);
            } else if (t == int[].class) {
                f.set(o, new int[]{1, 2});
            } else if (t == PayloadBuffer[].class) {
                f.set(o, new PayloadBuffer[]{new HeapPayloadMemory.Chunk(new byte[1])});
            } else if (t == ByteBuffer.class) {
                f.set(o, ByteBuffer.allocate(1));
            } else if (t == ByteBuffer[].class) {
                f.set(o, new ByteBuffer[]{ByteBuffer.allocate(1)});
            } else if (t == OutgoingPayload.class) {
                f.set(o, new OutgoingPayload() {
                    @Override
                    public int payloadLength() {
                        return 1;
                    }

                    @Override
                    public boolean payloadDirect() {
                        return false;
                    }

                    @Override
                    public void copyPayload(int offset, ByteBuffer out, int at, int n) {
                    }
                });
            } else if (t == OutgoingMessage.class) {
                f.set(o, new OutgoingMessage(new Rpc(96, OTHER_PEER, true), ByteBuffer.allocate(1), 0, 0));
            } else if (t == IncomingMessage.class) {
                f.set(o, new IncomingMessage(new Rpc(94, OTHER_PEER, true), 10, 0));
            } else {
                throw new AssertionError("scribble does not know the type of " + f + ": teach it, and init() the field");
            }
            assertNotEquals(before, f.get(o), f.getName() + " was not changed");
        }
    }

    private static void assertSameFields(Object want, Object got, Set<String> except) throws Exception {
        for (Field f : want.getClass().getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers()) || except.contains(f.getName())) {
                continue;
            }
            f.setAccessible(true);
            Object w = f.get(want);
            Object g = f.get(got);
            if (w instanceof int[] a && g instanceof int[] b) {
                assertEquals(java.util.Arrays.toString(a), java.util.Arrays.toString(b), f.getName() + " is not reset");
            } else {
                assertEquals(w, g, f.getName() + " is not reset by init()");
            }
        }
    }
}
