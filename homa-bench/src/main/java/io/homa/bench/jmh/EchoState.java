package io.homa.bench.jmh;

import io.homa.bench.EchoPair;
import io.homa.bench.Payloads;
import io.homa.bench.Transports;

import java.util.concurrent.TimeUnit;

/**
 * An echo server and client of one transport, opened for a trial. Subclasses carry the JMH
 * parameters. A combination the transport cannot carry fails its setup with a clear message.
 */
public abstract class EchoState {
    /** A call without a reply after this long fails the benchmark instead of hanging it. */
    static final long CALL_TIMEOUT_SECONDS = 10;

    EchoPair pair;
    byte[] request;

    void open(String transport, int size) {
        var t = Transports.create(transport);
        if (!t.supports(size)) {
            throw new IllegalArgumentException(transport + " does not carry " + size + "-byte messages (at most "
                    + t.maxMessageLength() + ")");
        }
        pair = EchoPair.open(t);
        request = Payloads.of(size);
    }

    void close() {
        if (pair != null) {
            pair.close();
            pair = null;
        }
    }

    /** One blocking echo of {@link #request}. */
    byte[] echo() throws Exception {
        return pair.client().call(request).get(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }
}
