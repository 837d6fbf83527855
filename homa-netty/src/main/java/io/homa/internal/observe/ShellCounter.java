package io.homa.internal.observe;

/**
 * The I/O shell's own counters, by index into the {@code long[]} each event loop keeps (and the
 * atomic array of the TCP fallback's threads). The same constants in the same order as the API's
 * {@code HomaMetrics.Shell}, which documents each one and reads these arrays by ordinal
 * (ShellCounterTest holds the two together). Internal use only.
 */
public enum ShellCounter {
    DATAGRAMS_SENT,
    SEND_CALLS,
    DATAGRAMS_RECEIVED,
    BYTES_SENT_DATA,
    BYTES_SENT_CONTROL,
    BYTES_RECEIVED_DATA,
    BYTES_RECEIVED_CONTROL,
    GSO_SENDS,
    RECEIVE_DEFERRED,
    IO_ERRORS,
    LOOP_HANDOFFS,
    EXECUTOR_HANDOFFS,
    CALLS_STARTED,
    CALLS_QUEUED,
    CALLS_SUCCEEDED,
    CALLS_FAILED,
    CALLS_DEADLINE_EXPIRED,
    CALLS_CLOSED,
    CALLS_CANCELLED,
    CALLS_OVERLOADED,
    REQUESTS_HANDLED,
    REQUESTS_REPLIED,
    REQUESTS_DROPPED,
    REQUESTS_OVERLOADED,
    REQUESTS_SKIPPED,
    DATAGRAMS_DROPPED,
    TCP_CALLS,
    FALLBACKS,
    FALLBACKS_REFUSED,
    PROBES,
    PEERS_ON_TCP,
    TCP_CONNECTIONS_OPENED,
    TCP_REQUESTS,
    TCP_BAD_FRAMES,
    FAULTS_DROPPED,
    FAULTS_DUPLICATED,
    FAULTS_REORDERED,
    SEND_PAYLOAD_BYTES_COPIED,
    SEND_PAYLOAD_BYTES_IN_PLACE,
    REQUESTS_EXPIRED,
    REQUESTS_SHED,
    REQUESTS_CANCELLED,
    CALLER_TURNS,
    CALLER_DATAGRAMS,
    CALLER_READS
}
