/**
 * The optional TCP fallback (docs/deployment.md): its framing, the calling side's connection
 * pools, the serving side's listener, and which peers are on TCP. Internal use only.
 */
package io.homa.internal.tcp;
