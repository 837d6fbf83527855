package io.homa.internal.rpc;

import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoop;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The event loop's deadlines ({@link DeadlineQueue}): order, removal, and the one timer re-armed. */
@org.junit.jupiter.api.extension.ExtendWith(io.homa.LeakCheck.class)
class DeadlineQueueTest {
    private DefaultEventLoopGroup group;
    private EventLoop loop;
    private DeadlineQueue queue;
    /** Names of the entries that expired, in order (on the loop). */
    private final List<String> expired = new ArrayList<>();

    private class Item implements DeadlineQueue.Entry {
        final String name;
        final long at;
        int slot = -1;

        Item(String name, long at) {
            this.name = name;
            this.at = at;
        }

        @Override
        public long deadlineNanos() {
            return at;
        }

        @Override
        public int deadlineSlot() {
            return slot;
        }

        @Override
        public void deadlineSlot(int slot) {
            this.slot = slot;
        }

        @Override
        public void deadlinePassed() {
            expired.add(name);
        }
    }

    @BeforeEach
    void setUp() {
        group = new DefaultEventLoopGroup(1);
        loop = group.next();
        queue = new DeadlineQueue(loop, new java.util.concurrent.locks.ReentrantLock());
    }

    @AfterEach
    void tearDown() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** Runs {@code task} on the loop and waits for it. */
    private <T> T onLoop(java.util.concurrent.Callable<T> task) throws Exception {
        return loop.submit(task).get(10, TimeUnit.SECONDS);
    }

    /** Waits (up to 10 s) until {@code n} entries have expired; their names. */
    private List<String> awaitExpired(int n) throws Exception {
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            List<String> now = onLoop(() -> new ArrayList<>(expired));
            if (now.size() >= n || System.nanoTime() - giveUp > 0) {
                return now;
            }
            CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(5, TimeUnit.MILLISECONDS)).join();
        }
    }

    @Test
    void passedDeadlinesExpireInOrderAndRemovedOnesNever() throws Exception {
        long now = System.nanoTime();
        Item[] items = new Item[40];
        // In one task on the loop, so that the timer cannot fire between the adds and the removes.
        List<String> removed = onLoop(() -> {
            // Deadlines already passed, added out of order: they fire at once, earliest first.
            for (int i = 0; i < items.length; i++) {
                int rank = (i * 17) % items.length; // a permutation of 0..39
                items[i] = new Item("e" + rank, now - 1_000_000L * (items.length - rank));
                queue.add(items[i]);
            }
            List<String> out = new ArrayList<>();
            for (int i = 0; i < items.length; i += 3) {
                assertTrue(queue.remove(items[i]));
                assertFalse(queue.remove(items[i]), "a second remove finds nothing");
                out.add(items[i].name);
            }
            return out;
        });
        List<String> got = awaitExpired(items.length - removed.size());
        List<String> want = new ArrayList<>();
        for (int rank = 0; rank < items.length; rank++) {
            if (!removed.contains("e" + rank)) {
                want.add("e" + rank);
            }
        }
        assertEquals(want, got);
        assertEquals(0, (int) onLoop(queue::size));
    }

    @Test
    void anEarlierDeadlineAddedLaterStillFiresFirst() throws Exception {
        long now = System.nanoTime();
        onLoop(() -> {
            queue.add(new Item("late", now + TimeUnit.HOURS.toNanos(1))); // arms the timer an hour away
            queue.add(new Item("soon", now + TimeUnit.MILLISECONDS.toNanos(20))); // must re-arm it
            return null;
        });
        assertEquals(List.of("soon"), awaitExpired(1));
        assertEquals(1, (int) onLoop(queue::size), "the late one waits");
    }

    @Test
    void anEntryAddedWhileExpiringIsTimedToo() throws Exception {
        long now = System.nanoTime();
        onLoop(() -> {
            queue.add(new Item("first", now) {
                @Override
                public void deadlinePassed() {
                    super.deadlinePassed();
                    queue.add(new Item("added", System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(30)));
                }
            });
            queue.add(new Item("second", now + TimeUnit.MILLISECONDS.toNanos(10)));
            return null;
        });
        assertEquals(List.of("first", "second", "added"), awaitExpired(3));
    }

    @Test
    void closeForgetsEveryEntry() throws Exception {
        long now = System.nanoTime();
        Item item = new Item("x", now + TimeUnit.MILLISECONDS.toNanos(10));
        onLoop(() -> {
            queue.add(item);
            queue.close();
            queue.add(new Item("after close", now));
            return null;
        });
        assertEquals(0, (int) onLoop(queue::size));
        assertFalse(onLoop(() -> queue.remove(item)));
        // Netty runs scheduled tasks in deadline order: a timer left for "x" would run before this.
        loop.schedule(() -> null, 50, TimeUnit.MILLISECONDS).get(10, TimeUnit.SECONDS);
        assertEquals(List.of(), onLoop(() -> new ArrayList<>(expired)));
    }
}
