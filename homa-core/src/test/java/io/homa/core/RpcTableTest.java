package io.homa.core;

import io.homa.core.wire.PacketType;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static io.homa.core.EnginePair.CFG;
import static io.homa.core.EnginePair.TICK;
import static io.homa.core.EnginePair.bytes;
import static org.junit.jupiter.api.Assertions.*;

/** RPC ids and the RPC table ({@link RpcTable}): ids, the two sides' names for one RPC, tombstones. */
class RpcTableTest {
    @Test
    void startRequest__firstIdIsEvenAndNotTwo() {
        HomaEngine e = new HomaEngine(CFG, 5);
        long id = e.startRequest(0, new InetSocketAddress("127.0.0.1", 9), bytes(1));
        assertEquals(0, id & 1);
        assertNotEquals(2, id);
    }

    @Test
    void startRequest__firstIdDependsOnSeed() {
        Set<Long> ids = new HashSet<>();
        for (long seed = 0; seed < 50; seed++) {
            ids.add(new HomaEngine(CFG, seed).startRequest(0, new InetSocketAddress("127.0.0.1", 9), bytes(1)));
        }
        assertEquals(50, ids.size(), "first ids are unpredictable, not a fixed start");
    }

    @Test
    void startRequest__successiveIdsDistinctAndEven() {
        HomaEngine e = new HomaEngine(CFG, 1);
        Set<Long> ids = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            long id = e.startRequest(0, new InetSocketAddress("127.0.0.1", 9), bytes(1));
            assertEquals(0, id & 1);
            assertTrue(ids.add(id));
        }
    }

    @Test
    void startRequest__idCarriesShard() {
        EngineConfig cfg = CFG.toBuilder().idShard(5, 8).build();
        HomaEngine e = new HomaEngine(cfg, 3);
        for (int i = 0; i < 100; i++) {
            long id = e.startRequest(0, new InetSocketAddress("127.0.0.1", 9), bytes(1));
            assertEquals(5, (id >>> 1) & 7, "shard bits");
            assertEquals(0, id & 1);
        }
    }

    @Test
    void responsePackets__carryServerIdXorOne() {
        EnginePair p = new EnginePair(CFG);
        long id = p.a.startRequest(p.now, p.addrB, bytes(100));
        p.exchange();
        p.serveFromB(new byte[50]);
        p.exchange();
        assertEquals(id, p.sent(p.addrA, PacketType.DATA).get(0).decoded().senderId);
        assertEquals(id ^ 1, p.sent(p.addrB, PacketType.DATA).get(0).decoded().senderId);
        assertEquals(EngineEvent.Kind.RESPONSE, p.eventsA.get(0).kind());
        assertEquals(id, p.eventsA.get(0).rpcId());
        assertEquals(id, p.eventsB.get(0).rpcId(), "the server names the RPC by the client's id");
    }

    @Test
    void lateDuplicateRequest_afterAck_notDeliveredAgain() {
        EnginePair p = new EnginePair(CFG);
        p.a.startRequest(p.now, p.addrB, bytes(10));
        List<EnginePair.Packet> request = p.drain(p.a);
        request.forEach(p::deliver);
        p.serveFromB(new byte[10]);
        p.exchange();
        p.advance((CFG.ackDelayTicks + 1) * TICK);
        assertEquals(0, p.b.liveServerRpcs());
        request.forEach(p::deliver); // the network delivers an old copy
        assertEquals(1, p.eventsB.size(), "delivered once");
        assertEquals(1, p.b.counter(Counter.LATE_DUPLICATE_REQUESTS));
        p.advance(CFG.tombstoneTicks * TICK + 2 * TICK);
        assertEquals(0, p.b.tombstones(), "tombstones expire");
        assertTrue(p.b.isQuiescent());
    }

    @Test
    void parkedRpcs_leaveTheLiveList_andComeBackInAgeOrder() {
        EngineCounters counters = new EngineCounters();
        TickClock clock = new TickClock(CFG.tickNanos);
        RpcTable t = new RpcTable(CFG, 1, clock, counters, new EngineEvents(), new GrantScheduler(CFG),
                new ControlPackets(counters), new MemoryLimits(CFG, counters), new SenderQueue(false), 10);
        Rpc[] r = new Rpc[6];
        for (int i = 0; i < r.length; i++) {
            InetSocketAddress peer = new InetSocketAddress("127.0.0.1", 9000 + i);
            r[i] = i % 2 == 0 ? t.newServerRpc(peer, 2L * (i + 1)) : t.newClientRpc(peer);
        }
        t.park(r[0]);
        t.park(r[2]);
        t.park(r[4]);
        assertEquals(List.of(r[1], r[3], r[5]), liveList(t));
        t.unpark(r[4]);
        t.unpark(r[0]);
        assertEquals(List.of(r[1], r[3], r[5]), liveList(t), "back only at the next tick's relink");
        t.relinkUnparked();
        assertEquals(List.of(r[0], r[1], r[3], r[4], r[5]), liveList(t), "each at its age's place");
        t.end(r[2]); // parked when it ends
        t.park(r[5]);
        t.unpark(r[5]);
        t.end(r[5]); // ended before the relink
        t.relinkUnparked();
        assertEquals(List.of(r[0], r[1], r[3], r[4]), liveList(t));
        assertEquals(4, t.liveRpcs());
        t.unpark(r[1]); // never parked: stays where it is
        t.relinkUnparked();
        assertEquals(List.of(r[0], r[1], r[3], r[4]), liveList(t));
    }

    private static List<Rpc> liveList(RpcTable t) {
        List<Rpc> out = new java.util.ArrayList<>();
        Rpc last = null;
        for (Rpc r = t.oldestLive(); r != null; r = r.newerLive) {
            assertEquals(last, r.olderLive, "links agree");
            out.add(r);
            last = r;
        }
        return out;
    }
}
