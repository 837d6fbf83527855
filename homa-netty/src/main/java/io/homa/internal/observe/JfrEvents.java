package io.homa.internal.observe;

import io.homa.core.EngineObserver;
import io.homa.core.RpcState;
import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.EventType;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Period;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongUnaryOperator;

/**
 * Homa's JDK Flight Recorder events (category "Homa", names {@code io.homa.*}, see
 * docs/observability.md), and the engine observer that emits them. Off unless a recording enables
 * them by name (they are {@code @Enabled(false)}, so the JDK's default and profile settings leave
 * them off); when off, each observed point costs one {@link EventType#isEnabled()} check and
 * builds nothing. One instance per engine loop, called on that loop.
 *
 * <p>Internal use only (public for the shell's other packages; the module does not export it).
 */
public final class JfrEvents implements EngineObserver {
    /** A socket as the periodic sample sees it. */
    public interface Sampled {
        /** Where the socket is bound. */
        InetSocketAddress localAddress();

        /** A snapshot of its live RPCs (one hand-off to each of its event loops). */
        List<RpcState> rpcStates();
    }

    @Name("io.homa.RpcCompleted")
    @Label("Homa RPC Completed")
    @Category("Homa")
    @Description("A client RPC received its whole response")
    @StackTrace(false)
    @Enabled(false)
    static final class RpcCompleted extends Event {
        @Label("Peer") String peer;
        @Label("RPC Id") long rpcId;
        @Label("Request Size") @DataAmount int requestBytes;
        @Label("Response Size") @DataAmount int responseBytes;
        @Label("Latency") @Description("From the call to its whole response") @Timespan long latency;
        @Label("Retransmitted") @Description("Request bytes sent again after RESENDs") @DataAmount long retransmittedBytes;
        @Label("Priority") @Description("Priority level of the request's last GRANT") int priority;
    }

    @Name("io.homa.Resend")
    @Label("Homa RESEND")
    @Category("Homa")
    @Description("A RESEND sent (we miss data) or received (the peer misses ours)")
    @StackTrace(false)
    @Enabled(false)
    static final class Resend extends Event {
        @Label("Sent") @Description("True: we asked; false: the peer asked") boolean sent;
        @Label("Peer") String peer;
        @Label("RPC Id") long rpcId;
        @Label("Offset") int offset;
        @Label("Length") @DataAmount int length;
    }

    @Name("io.homa.RpcTimedOut")
    @Label("Homa RPC Timed Out")
    @Category("Homa")
    @Description("A client RPC failed: its server stayed silent for timeoutTicks")
    @StackTrace(false)
    @Enabled(false)
    static final class RpcTimedOut extends Event {
        @Label("Peer") String peer;
        @Label("RPC Id") long rpcId;
    }

    @Name("io.homa.RequestRestarted")
    @Label("Homa Request Restarted")
    @Category("Homa")
    @Description("The server did not know a client RPC (RPC_UNKNOWN): its request starts over")
    @StackTrace(false)
    @Enabled(false)
    static final class RequestRestarted extends Event {
        @Label("Peer") String peer;
        @Label("RPC Id") long rpcId;
        @Label("Restarts") int restarts;
    }

    @Name("io.homa.GrantStarved")
    @Label("Homa Message Waiting For Grants")
    @Category("Homa")
    @Description("An outgoing message that sent all it was granted, in an RPC older than the threshold"
            + " (io.homa.jfr.grantWaitMillis, 10 ms by default); sampled every period")
    @StackTrace(false)
    @Enabled(false)
    @Period("1 s")
    static final class GrantStarved extends Event {
        @Label("Socket") String socket;
        @Label("Peer") String peer;
        @Label("RPC Id") long rpcId;
        @Label("Message Length") @DataAmount int length;
        @Label("Granted") @DataAmount int granted;
        @Label("RPC Age") @Timespan long age;
    }

    /**
     * The event types and the sockets the periodic {@link GrantStarved} sample looks at (the hook
     * runs only while a recording enables that event). Set up when the first socket opens, on the
     * opening thread, so that registering the types with the recorder never delays an event loop.
     */
    private static final class Registry {
        static final EventType COMPLETED = EventType.getEventType(RpcCompleted.class);
        static final EventType RESEND = EventType.getEventType(Resend.class);
        static final EventType TIMED_OUT = EventType.getEventType(RpcTimedOut.class);
        static final EventType RESTARTED = EventType.getEventType(RequestRestarted.class);
        /** RPCs younger than this are not reported as starved of grants. */
        static final long GRANT_WAIT_NANOS =
                Duration.ofMillis(Long.getLong("io.homa.jfr.grantWaitMillis", 10)).toNanos();
        static final Set<Sampled> SOCKETS = ConcurrentHashMap.newKeySet();

        static {
            FlightRecorder.addPeriodicEvent(GrantStarved.class, Registry::sampleGrantStarved);
        }

        private static void sampleGrantStarved() {
            for (Sampled s : SOCKETS) {
                for (RpcState r : s.rpcStates()) {
                    if (waitingForGrants(r) && r.ageNanos() >= GRANT_WAIT_NANOS) {
                        GrantStarved e = new GrantStarved();
                        e.socket = String.valueOf(s.localAddress());
                        e.peer = String.valueOf(r.peer());
                        e.rpcId = r.id();
                        e.length = r.outLength();
                        e.granted = r.outGranted();
                        e.age = r.ageNanos();
                        e.commit();
                    }
                }
            }
        }
    }

    /**
     * Whether {@code r}'s outgoing message has sent all it was granted and waits for more (as the
     * API's {@code RpcInfo.waitingForGrants()} says it).
     */
    public static boolean waitingForGrants(RpcState r) {
        return r.outLength() > 0 && r.outSent() >= r.outGranted() && r.outGranted() < r.outLength();
    }

    /** Whether this JVM has a Flight Recorder (else the sockets run without events). */
    private static final boolean AVAILABLE = FlightRecorder.isAvailable();

    /** A client RPC's start time ({@link System#nanoTime()}) by id, or 0 if unknown. */
    private final LongUnaryOperator callStart;

    JfrEvents(LongUnaryOperator callStart) {
        this.callStart = callStart;
    }

    /**
     * The observer for one engine loop, or {@link EngineObserver#NONE} where this JVM has no
     * Flight Recorder (the socket then works without events).
     */
    public static EngineObserver observer(LongUnaryOperator callStart) {
        return AVAILABLE ? new JfrEvents(callStart) : EngineObserver.NONE;
    }

    /** A socket opened: the periodic {@link GrantStarved} sample looks at it from now on. */
    public static void opened(Sampled socket) {
        if (AVAILABLE) {
            Registry.SOCKETS.add(socket);
        }
    }

    public static void closed(Sampled socket) {
        if (AVAILABLE) {
            Registry.SOCKETS.remove(socket);
        }
    }

    @Override
    public void clientRpcCompleted(InetSocketAddress peer, long rpcId, int requestBytes, int responseBytes,
                                   long retransmittedBytes, int priority) {
        if (!Registry.COMPLETED.isEnabled()) {
            return;
        }
        long started = callStart.applyAsLong(rpcId);
        RpcCompleted e = new RpcCompleted();
        e.peer = peer.toString();
        e.rpcId = rpcId;
        e.requestBytes = requestBytes;
        e.responseBytes = responseBytes;
        e.latency = started == 0 ? 0 : System.nanoTime() - started;
        e.retransmittedBytes = retransmittedBytes;
        e.priority = priority;
        e.commit();
    }

    @Override
    public void resendSent(InetSocketAddress peer, long rpcId, int offset, int length) {
        resend(true, peer, rpcId, offset, length);
    }

    @Override
    public void resendReceived(InetSocketAddress peer, long rpcId, int offset, int length) {
        resend(false, peer, rpcId, offset, length);
    }

    private static void resend(boolean sent, InetSocketAddress peer, long rpcId, int offset, int length) {
        if (!Registry.RESEND.isEnabled()) {
            return;
        }
        Resend e = new Resend();
        e.sent = sent;
        e.peer = peer.toString();
        e.rpcId = rpcId;
        e.offset = offset;
        e.length = length;
        e.commit();
    }

    @Override
    public void clientRpcTimedOut(InetSocketAddress peer, long rpcId) {
        if (!Registry.TIMED_OUT.isEnabled()) {
            return;
        }
        RpcTimedOut e = new RpcTimedOut();
        e.peer = peer.toString();
        e.rpcId = rpcId;
        e.commit();
    }

    @Override
    public void requestRestarted(InetSocketAddress peer, long rpcId, int restarts) {
        if (!Registry.RESTARTED.isEnabled()) {
            return;
        }
        RequestRestarted e = new RequestRestarted();
        e.peer = peer.toString();
        e.rpcId = rpcId;
        e.restarts = restarts;
        e.commit();
    }
}
