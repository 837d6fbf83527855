/**
 * The calls and requests the shell carries between the application and the engine loops
 * (ClientCall, InboundRequest), their deadlines (DeadlineQueue), the interfaces through which the
 * shell reaches the application (RequestHandler, CallObserver), and where user code runs
 * (Dispatcher). Internal use only.
 */
package io.homa.internal.rpc;
