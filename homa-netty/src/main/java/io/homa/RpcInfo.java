package io.homa;

import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * One live RPC of a socket at the moment {@link HomaSocket#rpcs()} looked (as Linux Homa's
 * {@code HOMAIOCINFO} reports): immutable, safe to keep and to read from any thread.
 *
 * <p>"Out" is the message this side sends (the request on the client, the response on the
 * server), "in" the one it receives. A message this side does not hold has length -1 and -1 for
 * its byte counts: one not started yet, and an incoming one once delivered (a server RPC in
 * {@code SERVER_PROCESSING} and later no longer holds its request).
 *
 * @param id this side's RPC id (even on the client, the client's id + 1 on the server)
 * @param peer the other side's address
 * @param role whether this side is the client or the server
 * @param state the protocol state: {@code CLIENT_ACTIVE}, {@code SERVER_RECEIVING},
 *              {@code SERVER_PROCESSING} (the handler has the request), {@code SERVER_RESPONDING}
 *              or {@code SERVER_AWAITING_ACK}
 * @param outLength length of the outgoing message
 * @param bytesSent bytes of the outgoing message sent at least once
 * @param bytesGranted bytes of the outgoing message the receiver allows us to send; a message with
 *                     {@code bytesSent == bytesGranted < outLength} waits for grants
 * @param inLength length of the incoming message
 * @param bytesReceived bytes of the incoming message received
 * @param bytesGrantedIn bytes of the incoming message this side has allowed its sender to send
 * @param gaps holes in what was received below {@code bytesGrantedIn} (at most 16 counted): lost
 *             or reordered packets
 * @param priority the priority level (0-7, 7 highest) of the last grant for the outgoing message,
 *                 else of the incoming one
 * @param silentTicks timer ticks since a packet for this RPC last arrived
 * @param age time since the RPC started on this side
 * @param peerIdentity the peer's verified identity on a secured socket ({@link HomaRequest#peerIdentity()}), else null
 */
public record RpcInfo(long id, InetSocketAddress peer, Role role, String state,
                      int outLength, int bytesSent, int bytesGranted,
                      int inLength, long bytesReceived, int bytesGrantedIn, int gaps,
                      int priority, int silentTicks, Duration age, String peerIdentity) {
    /** An RPC of a plain socket (no verified identity): the record as it was before {@code peerIdentity}. */
    public RpcInfo(long id, InetSocketAddress peer, Role role, String state,
                   int outLength, int bytesSent, int bytesGranted,
                   int inLength, long bytesReceived, int bytesGrantedIn, int gaps,
                   int priority, int silentTicks, Duration age) {
        this(id, peer, role, state, outLength, bytesSent, bytesGranted, inLength, bytesReceived, bytesGrantedIn, gaps,
                priority, silentTicks, age, null);
    }

    /** Which side of the RPC this socket is. */
    public enum Role { CLIENT, SERVER }

    /** Whether the outgoing message has sent all it was granted and waits for more grants. */
    public boolean waitingForGrants() {
        return outLength > 0 && bytesSent >= bytesGranted && bytesGranted < outLength;
    }
}
