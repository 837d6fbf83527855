package io.homa.collective;

/**
 * A group's counters since it was created.
 *
 * @param operations      operations started on this rank
 * @param failed          operations that failed on this rank
 * @param messagesSent    segments sent (a header and up to {@link CollectiveOptions#segmentBytes()} of elements)
 * @param bytesSent       bytes of those messages, headers included
 * @param messagesReceived segments received
 * @param bytesReceived   bytes of those messages, headers included
 * @param refused         messages refused: malformed, from another group, of a mismatched operation,
 *                        for a failed operation, or beyond the early-data limit (each dropped and its
 *                        memory given back)
 */
public record CollectiveStats(long operations, long failed, long messagesSent, long bytesSent,
                              long messagesReceived, long bytesReceived, long refused) {
}
