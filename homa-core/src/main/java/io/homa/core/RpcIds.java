package io.homa.core;

/**
 * The bit layout of RPC ids, written once for the engine and for the I/O shell that routes
 * datagrams between the engines of one socket. As in Linux Homa, bit 0 tells the sides apart: a
 * client's id is even and its server names the same RPC {@code id ^ 1}. Above it, the low
 * {@code log2(idShardCount)} bits name the engine (shard) that started the RPC, so that a packet
 * about a client RPC can be handed to the engine that owns it. The remaining bits are the
 * engine's to choose ({@code RpcIdSequence}).
 */
public final class RpcIds {
    private RpcIds() {
    }

    /** Whether {@code id} is a client's id (even): packets from clients carry it, about server RPCs. */
    public static boolean isClientId(long id) {
        return (id & 1) == 0;
    }

    /** The shard (0 .. shardCount-1) whose engine started the RPC named by {@code id}, either side's. */
    public static int shard(long id, int shardCount) {
        return (int) ((id >>> 1) & (shardCount - 1));
    }
}
