/**
 * The datagram path of one event loop: reads ordered for SRPT on the host (ReceiveDrain), received
 * payload memory (NettyPayloadMemory), writes with GSO and zero-copy send (DatagramWriter,
 * SendArena), and the test fault injector. Internal use only.
 */
package io.homa.internal.udp;
