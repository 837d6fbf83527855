package io.homa.internal;

import io.homa.core.EngineConfig;
import io.homa.core.sim.FaultModel;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.Executor;

/**
 * The settings of one socket as its shell reads them: the validated values of the socket's
 * {@code HomaConfig} (which is API, and so above the shell), the protocol's {@link EngineConfig},
 * and the factory of the API's exceptions. Immutable once built; {@code tosByLevel} is never
 * changed after construction. Internal use only.
 *
 * @param engine              the protocol settings every engine starts from
 * @param requestTimeout      how long a server keeps a request its handler has not answered
 * @param ioTransport         the preferred Netty transport by name: AUTO, IO_URING, EPOLL or NIO
 * @param faultSeed           seed of the fault injector ({@code io.homa.testing})
 * @param dataFaults          injected faults of DATA datagrams ({@link FaultModel#NONE}: none)
 * @param controlFaults       injected faults of control datagrams
 * @param failures            makes the exceptions that reach the application
 * @param cipherProvider      the JCA provider of the packets' AES-GCM; null: the JCA's order of preference
 */
public record ShellConfig(EngineConfig engine, InetSocketAddress bindAddress, int eventLoops, Duration requestTimeout,
                          int maxCallsPerServer, int maxQueuedRequests, Duration queueTarget, Duration queueInterval,
                          Executor executor, int executorThreads,
                          boolean inlineExecution, boolean prioritySockets, int[] tosByLevel, int receiveBatch,
                          boolean gso, boolean gro, boolean busyPoll, boolean callerSends, Duration callerSpin, boolean callerReads, boolean nativeTransport, String ioTransport,
                          int receiveBufferBytes, int sendBufferBytes, boolean tcpFallback, Duration probeInterval,
                          Duration fallbackPeriod, int tcpConnectionsPerPeer, Duration tcpIdleTimeout, long faultSeed,
                          FaultModel dataFaults, FaultModel controlFaults, Failure.Factory failures,
                          io.homa.core.psp.PspMasterKeys security, String peerName,
                          io.homa.internal.TlsSettings tls, java.security.Provider cipherProvider) {
    /** The IP TOS byte of priority {@code level} (used when {@link #prioritySockets()}). */
    public int tos(int level) {
        return tosByLevel[level];
    }

    /** Largest request or response, in bytes. */
    public int maxMessageLength() {
        return engine.maxMessageLength;
    }

    /** The MTU the packets are sized for. */
    public int mtu() {
        return engine.mtu;
    }

    /**
     * Whether datagrams are sealed and opened ({@link #security()} holds the master keys; null when
     * off). With {@link #tls()} they are this socket's own, made at random, and peers' keys come
     * from key exchanges; else they are pre-shared.
     */
    public boolean secured() {
        return security != null;
    }

    /** Whether the fault injector is on. */
    public boolean faultInjection() {
        return !dataFaults.isNone() || !controlFaults.isNone();
    }
}
