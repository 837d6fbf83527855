/**
 * Key exchange for secured sockets in the mutual-TLS mode: a TLS 1.3 connection per peer pair on
 * the socket's TCP port ({@link io.homa.internal.tls.KeyExchange}), the few frames it carries
 * ({@link io.homa.internal.tls.KeyFrames}), the TLS handshakes it shares with the TCP fallback
 * ({@link io.homa.internal.tls.TlsContext}), and what came of it ({@link io.homa.internal.tls.PeerKeys}):
 * the keys this socket seals with, by peer and event loop, and which peer each SPI it issued
 * belongs to. The datagrams themselves are sealed and opened in {@code io.homa.internal.udp}.
 * Internal use only.
 */
package io.homa.internal.tls;
