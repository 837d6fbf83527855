package io.homa.collective;

import java.util.List;

/** The operation's deadline passed before every rank it waits on took part; {@link #missingRanks()} names them. */
public final class CollectiveTimeoutException extends CollectiveException {
    private static final long serialVersionUID = 1L;
    private final List<Integer> missingRanks;

    public CollectiveTimeoutException(String message, List<Integer> missingRanks) {
        super(message);
        this.missingRanks = List.copyOf(missingRanks);
    }

    /** The ranks this rank was still waiting for (data not received, or a send not acknowledged). */
    public List<Integer> missingRanks() {
        return missingRanks;
    }
}
