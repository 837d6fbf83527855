/**
 * The event loops that drive the engines: one EngineLoop per Netty event loop (the order of work
 * in one turn), its client side (ClientCalls), server side (ServedRequests), the TCP fallback's
 * probes, the commands other threads queue to it, and EngineLoops, the shell of one socket (bind,
 * hand-offs, metrics, close). Internal use only.
 */
package io.homa.internal.loop;
