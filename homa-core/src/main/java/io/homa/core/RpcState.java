package io.homa.core;

import java.net.InetSocketAddress;

/**
 * One live RPC as {@link HomaEngine#rpcs} saw it (compare Linux Homa's {@code HOMAIOCINFO}).
 * Byte counts are -1 where the RPC has no such message yet (e.g. no response).
 *
 * @param id this side's id of the RPC (even on the client, odd on the server)
 * @param client whether this side is the client
 * @param state the engine's state name ({@code CLIENT_ACTIVE}, {@code SERVER_RECEIVING}, ...)
 * @param outLength length of the message this side sends
 * @param outSent bytes of it sent at least once
 * @param outGranted bytes of it the receiver allows us to send
 * @param inLength length of the message this side receives
 * @param inReceived bytes of it received
 * @param inGranted bytes of it this side has granted
 * @param gaps holes below {@code inGranted} in what was received (at most 16 counted)
 * @param priority the priority level of the last grant (for what we send, else what we receive)
 * @param silentTicks timer ticks since a packet for this RPC last arrived
 * @param ageNanos time since the RPC started, by the engine's clock
 */
public record RpcState(long id, InetSocketAddress peer, boolean client, String state,
                       int outLength, int outSent, int outGranted,
                       int inLength, long inReceived, int inGranted, int gaps,
                       int priority, int silentTicks, long ageNanos) {
}
