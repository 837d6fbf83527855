/**
 * Netty's transports (io_uring, epoll, NIO): the choice and its fallbacks, event loop groups, and
 * the bootstrap and options of the UDP channels and the TCP fallback's channels, with the batched
 * read allocator. Internal use only.
 */
package io.homa.internal.transport;
