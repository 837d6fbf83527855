package io.homa.core;

import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketEncoder;
import io.homa.core.wire.PacketType;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Set;

import static io.homa.core.EnginePair.CFG;
import static io.homa.core.EnginePair.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * RPC ids cannot be predicted ({@link RpcIdSequence}). A third address that is itself a server of
 * the client sees the ids of the requests it gets, then tries to end the client's RPCs to an honest
 * server by forging that server's RPC_UNKNOWN for the ids it predicts. None lands; the same
 * predictions on the former sequential ids (a random start plus a fixed step) would have named
 * every one of them; and the forged packet does restart an RPC whose id it names, so the attack
 * itself works when the id is known.
 */
class RpcIdPredictionTest {
    private static final InetSocketAddress HONEST_SERVER = new InetSocketAddress("127.0.0.1", 7000);
    private static final InetSocketAddress OBSERVER = new InetSocketAddress("127.0.0.1", 7001);
    private static final int SEEN = 8;
    private static final int ATTACKED = 1_000;
    /** Guesses per extrapolation rule. */
    private static final int GUESSES = 1_000;

    @Test
    void anAddressThatSawSeveralIds_cannotPredictTheNext() {
        HomaEngine client = new HomaEngine(CFG, 0x5EED_0001L);
        long[] seen = new long[SEEN];
        for (int i = 0; i < SEEN; i++) {
            seen[i] = client.startRequest(0, OBSERVER, bytes(10)); // the observer reads them off its DATA
        }
        Set<Long> attacked = new HashSet<>();
        for (int i = 0; i < ATTACKED; i++) {
            attacked.add(client.startRequest(0, HONEST_SERVER, bytes(10)));
        }

        Set<Long> guesses = predictNext(seen);
        Set<Long> hits = new HashSet<>(guesses);
        hits.retainAll(attacked);
        for (long guess : guesses) {
            client.onDatagram(0, HONEST_SERVER, forgedRpcUnknown(guess));
        }
        System.out.printf("[id prediction] %d guesses from %d seen ids: %d hit a live RPC, %d restarts%n",
                guesses.size(), SEEN, hits.size(), client.counter(Counter.REQUEST_RESTARTS));
        assertTrue(hits.isEmpty(), "predicted live ids " + hits);
        assertEquals(0, client.counter(Counter.REQUEST_RESTARTS), "a forged RPC_UNKNOWN restarted an RPC");
        assertEquals(guesses.size(), client.drops(DropReason.UNKNOWN_RPC));
        assertEquals(SEEN + ATTACKED, client.liveClientRpcs());

        // The same observer against the former scheme: a random start, then + 2 each time.
        long start = seen[0];
        long[] sequentialSeen = new long[SEEN];
        Set<Long> sequentialAttacked = new HashSet<>();
        for (int i = 0; i < SEEN + ATTACKED; i++) {
            long id = start + 2L * i;
            if (i < SEEN) {
                sequentialSeen[i] = id;
            } else {
                sequentialAttacked.add(id);
            }
        }
        Set<Long> sequentialHits = new HashSet<>(predictNext(sequentialSeen));
        sequentialHits.retainAll(sequentialAttacked);
        assertEquals(ATTACKED, sequentialHits.size(), "with sequential ids the prediction names every RPC");

        // And the forged packet is effective when its id is right: it restarts the request.
        long known = attacked.iterator().next();
        client.onDatagram(0, HONEST_SERVER, forgedRpcUnknown(known));
        assertEquals(1, client.counter(Counter.REQUEST_RESTARTS));
    }

    @Test
    void idsOfOneEngine_areUniqueEvenCarryTheShardAndAreNotMonotonic() {
        for (int shardCount : new int[] {1, 8, 1024}) {
            int shard = shardCount - 1;
            RpcIdSequence sequence = new RpcIdSequence(0xC0FFEEL + shardCount, shard, shardCount);
            long[] ids = new long[1_000_000];
            int increasing = 0;
            for (int i = 0; i < ids.length; i++) {
                long id = sequence.next();
                assertEquals(0, id & 1, "a client id is even");
                assertEquals(shard, RpcIds.shard(id, shardCount), "shard bits");
                assertNotEquals(0, id);
                ids[i] = id;
                if (i > 0 && Long.compareUnsigned(id, ids[i - 1]) > 0) {
                    increasing++;
                }
            }
            // Successive ids go up about half the time: no order to extrapolate.
            assertTrue(increasing > 490_000 && increasing < 510_000, "increasing steps: " + increasing);
            Arrays.sort(ids);
            for (int i = 1; i < ids.length; i++) {
                assertNotEquals(ids[i - 1], ids[i], "id repeated within a million");
            }
        }
    }

    @Test
    void sameSecret_sameIds_otherSecret_otherIds() {
        RpcIdSequence x = new RpcIdSequence(42, 0, 1);
        RpcIdSequence y = new RpcIdSequence(42, 0, 1);
        RpcIdSequence z = new RpcIdSequence(43, 0, 1);
        Set<Long> fromZ = new HashSet<>();
        long[] fromX = new long[1000];
        for (int i = 0; i < fromX.length; i++) {
            fromX[i] = x.next();
            assertEquals(fromX[i], y.next(), "replayable from the seed");
            fromZ.add(z.next());
        }
        for (long id : fromX) {
            assertTrue(!fromZ.contains(id), "two secrets share an id");
        }
    }

    /**
     * What an observer would try next after seeing {@code seen} (in order): continue from the last
     * id by the smallest step an engine could use, by the last difference, by the smallest
     * difference seen, forwards and backwards (the ids it saw excluded).
     */
    private static Set<Long> predictNext(long[] seen) {
        long last = seen[seen.length - 1];
        long smallest = Long.MAX_VALUE;
        for (int i = 1; i < seen.length; i++) {
            long d = Math.abs(seen[i] - seen[i - 1]);
            if (d != 0) {
                smallest = Math.min(smallest, d);
            }
        }
        long[] steps = {2, seen[seen.length - 1] - seen[seen.length - 2], smallest};
        Set<Long> guesses = new LinkedHashSet<>();
        for (long step : steps) {
            for (int k = 1; k <= GUESSES; k++) {
                guesses.add(last + k * step);
                guesses.add(last - k * step);
            }
        }
        for (long id : seen) {
            guesses.remove(id); // known already: the observer wants the others
        }
        return guesses;
    }

    /** RPC_UNKNOWN as the honest server would send it about the client's RPC {@code clientId}. */
    private static ByteBuffer forgedRpcUnknown(long clientId) {
        ByteBuffer b = ByteBuffer.allocate(64);
        PacketEncoder.bare(b, PacketType.RPC_UNKNOWN, clientId ^ 1);
        return b.flip();
    }
}
