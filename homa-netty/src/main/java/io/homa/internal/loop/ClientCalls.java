package io.homa.internal.loop;

import io.homa.core.EngineEvent;
import io.homa.core.RpcError;
import io.homa.internal.Failure;
import io.homa.internal.observe.ShellCounter;
import io.homa.internal.rpc.CallObserver;
import io.homa.internal.rpc.ClientCall;
import io.netty.util.collection.LongObjectHashMap;

import java.net.InetSocketAddress;

/**
 * The client side of one engine loop: starts the calls handed to it (at most
 * {@code maxCallsPerServer} per server in the engine, the rest waiting in {@link CallWindows}),
 * completes them from the engine's RESPONSE and FAILED events, and enforces their deadlines and
 * cancellations. Every method but those of {@link ClientCall.Runner} that say "any thread" runs
 * on the loop.
 */
final class ClientCalls implements ClientCall.Runner {
    private final EngineLoop l;
    /** Our client calls in the engine, by RPC id (primitive keys: no boxing per call). */
    private final LongObjectHashMap<ClientCall<?>> calls = new LongObjectHashMap<>();
    private final CallWindows windows;
    private final int maxCallsPerServer;

    ClientCalls(EngineLoop loop, int maxCallsPerServer) {
        this.l = loop;
        this.maxCallsPerServer = maxCallsPerServer;
        this.windows = new CallWindows(maxCallsPerServer);
    }

    // ------------------------------------------------------------------ ClientCall.Runner

    /** Starts a call (any thread); the call is its own command, so this costs no lambda. */
    @Override
    public void call(ClientCall<?> c) {
        l.runOnLoop(c);
    }

    /** A thread waits for {@code c}'s future (any thread): it may read its response itself for a while. */
    @Override
    public void awaiting(ClientCall<?> c, long timeoutNanos) {
        l.awaiting(c, timeoutNanos);
    }

    /** {@code c}'s future completed while a thread waited for it (any thread). */
    @Override
    public void finished(ClientCall<?> c) {
        l.finished(c);
    }

    /** Another thread is about to complete {@code c}'s future (any thread). */
    @Override
    public void finishing(ClientCall<?> c) {
        l.finishing(c);
    }

    /** The caller cancelled {@code c}'s future (any thread): abort its RPC. */
    @Override
    public void cancel(ClientCall<?> c) {
        l.runOnLoop(() -> cancelled(c));
    }

    /** Starts a call, on the loop (its {@link ClientCall#run}). */
    @Override
    public void start(ClientCall<?> c) {
        if (l.isClosed()) {
            l.socket.finishClosed(c, true);
            return;
        }
        long remaining = c.deadlineNanos - System.nanoTime();
        if (remaining <= 0) {
            refuse(c, failure(Failure.TIMEOUT, c + ": deadline of " + c.deadline + " passed before it started"));
            return;
        }
        l.deadlines.add(c);
        if (windows.admit(c)) {
            if (!launch(c)) {
                releaseSlot(c.server);
            }
        } else {
            l.count(ShellCounter.CALLS_QUEUED);
        }
        l.drain();
    }

    /** A call's deadline passed (its {@link io.homa.internal.rpc.DeadlineQueue.Entry#deadlinePassed}). */
    @Override
    public void deadlinePassed(ClientCall<?> c) {
        if (l.isClosed()) {
            return;
        }
        if (windows.removeWaiting(c)) {
            l.count(ShellCounter.CALLS_DEADLINE_EXPIRED);
            refuse(c, failure(Failure.TIMEOUT, c + ": no response within its deadline of " + c.deadline
                    + " (it waited for one of the " + maxCallsPerServer + " slots per server all along)"));
            return;
        }
        if (removeCall(c.rpcId) != c) {
            return;
        }
        l.engine.abort(System.nanoTime(), c.rpcId);
        l.count(ShellCounter.CALLS_DEADLINE_EXPIRED);
        fail(c, failure(Failure.TIMEOUT, c + ": no response within its deadline of " + c.deadline));
        releaseSlot(c.server);
        l.drain();
    }

    // ------------------------------------------------------------------ into the engine and out

    /** Hands an admitted call to the engine; false (and the call failed) if the engine refused it. */
    private boolean launch(ClientCall<?> c) {
        long id;
        try {
            // The deadline goes to the server with the request, so that it does not start work
            // for a caller that stopped waiting. The engine reads the request from the call itself
            // (its array, or its buffer in place, composites too) until it releases it.
            id = l.engine.startRequest(System.nanoTime(), c.server, c, c.deadlineNanos, c.idempotent());
        } catch (IllegalStateException e) {
            endTimers(c);
            refuse(c, failure(Failure.RESOURCE_LIMIT, c + " refused: " + e.getMessage()));
            return false;
        } catch (IllegalArgumentException e) {
            endTimers(c);
            refuse(c, failure(Failure.MESSAGE_TOO_LARGE, c + " refused: " + e.getMessage()));
            return false;
        }
        c.rpcId = id;
        calls.put(id, c);
        l.count(ShellCounter.CALLS_STARTED);
        if (l.fallback != null) {
            l.fallback.watch(c);
        }
        return true;
    }

    /** The call of RPC {@code rpcId} if it is still ours, else null. */
    ClientCall<?> get(long rpcId) {
        return calls.get(rpcId);
    }

    /** When the call of RPC {@code rpcId} was made ({@link System#nanoTime()}), or 0 if unknown: for JFR. */
    long startedNanos(long rpcId) {
        ClientCall<?> c = calls.get(rpcId);
        return c == null ? 0 : c.startedNanos();
    }

    /** Takes a client call out of the engine's set (null if it is not there). */
    ClientCall<?> removeCall(long rpcId) {
        ClientCall<?> c = calls.remove(rpcId);
        if (c != null && l.fallback != null) {
            l.fallback.unwatch(c);
        }
        return c;
    }

    /** A call to {@code server} left the engine: let the next waiting one in. */
    void releaseSlot(InetSocketAddress server) {
        ClientCall<?> next;
        while ((next = windows.release(server)) != null) {
            if (launch(next)) {
                return;
            }
        }
    }

    private void cancelled(ClientCall<?> c) {
        if (l.isClosed() || !l.socket.forget(c)) {
            return; // already finished (or the close path owns it)
        }
        endTimers(c);
        l.count(ShellCounter.CALLS_CANCELLED);
        if (windows.removeWaiting(c)) {
            c.releaseOwner(); // never reached the engine
            return;
        }
        if (c.rpcId != 0 && removeCall(c.rpcId) == c) {
            l.engine.abort(System.nanoTime(), c.rpcId); // releases the payload through the engine
            releaseSlot(c.server);
            l.drain();
        }
    }

    /** Takes a call's deadline and TCP probe off the loop. */
    void endTimers(ClientCall<?> c) {
        l.deadlines.remove(c);
        c.cancelProbe();
    }

    /** The engine's RESPONSE event: the call succeeds. */
    void onResponse(EngineEvent e) {
        ClientCall<?> c = removeCall(e.rpcId());
        if (c == null) {
            e.message().release(); // cannot happen (an ended call's RPC was aborted), but stay exact
            return;
        }
        endTimers(c);
        l.count(ShellCounter.CALLS_SUCCEEDED);
        callEnded(c, e.message().length());
        if (l.socket.forget(c)) {
            l.dispatcher.succeed(c, e.message());
        } else {
            e.message().release(); // the close path finished the call
        }
        releaseSlot(c.server);
    }

    /** The engine's FAILED event: the call fails with the API's exception for the error. */
    void onFailed(EngineEvent e) {
        ClientCall<?> c = removeCall(e.rpcId());
        if (c == null) {
            return;
        }
        endTimers(c);
        if (c.fallbackRefused() && e.error() == RpcError.TIMEOUT) {
            l.socket.peers().onTcp(c.server); // its requests arrive, its answers do not
        }
        if (e.error() == RpcError.OVERLOADED) {
            l.count(ShellCounter.CALLS_OVERLOADED);
        }
        fail(c, toException(c, e.error()));
        releaseSlot(c.server);
    }

    private RuntimeException toException(ClientCall<?> c, RpcError error) {
        return switch (error) {
            case TIMEOUT -> failure(Failure.TIMEOUT, c + (c.fallbackRefused()
                    ? ": no Homa answer came back, though the server received the request over Homa (it said so"
                    + " over TCP, and did not run it again there: it may have run once)"
                    : ": the server was silent for too long (it is gone, unreachable or overloaded)"));
            case OVERLOADED -> failure(Failure.OVERLOADED, c + " refused by the server: its handlers could not"
                    + " start this request in time (too many wait for them); it did not run it (retry later)");
            case PEER_UNKNOWN_RPC -> failure(Failure.UNKNOWN_RPC, c + ": the server does not know this RPC, even"
                    + " after sending it again (it restarted, or its handler failed or never replied)");
            case OUTCOME_UNKNOWN -> failure(Failure.OUTCOME_UNKNOWN, c + ": the server no longer knows this call, and"
                    + " it has restarted since the whole request went out: the server it replaced may have run the"
                    + " request, so it was not sent again (mark the call idempotent if running it twice is harmless)");
        };
    }

    private RuntimeException failure(Failure kind, String message) {
        return l.socket.config.failures().create(kind, message);
    }

    /** Fails a call the engine took (or never took, after {@link #refuse}). */
    void fail(ClientCall<?> c, RuntimeException ex) {
        l.count(ShellCounter.CALLS_FAILED);
        callEnded(c, -1);
        if (l.socket.forget(c)) {
            l.dispatcher.fail(c, ex);
        }
    }

    /** Fails a call the engine never took: its buffer is still ours to release. */
    private void refuse(ClientCall<?> c, RuntimeException ex) {
        c.releaseOwner();
        fail(c, ex);
    }

    /** Tells the socket's call listeners that {@code c} ended ({@code responseBytes} -1: failed). */
    private void callEnded(ClientCall<?> c, int responseBytes) {
        CallObserver observer = l.socket.observer;
        if (observer.observing()) { // it logs and skips a listener that throws
            observer.callEnded(c.server, c.length, responseBytes, System.nanoTime() - c.startedNanos());
        }
    }

    /** Fails every call, in the engine and waiting, because the socket closes (on the loop). */
    void close() {
        for (ClientCall<?> c : calls.values()) {
            endTimers(c);
            l.count(ShellCounter.CALLS_FAILED);
            l.count(ShellCounter.CALLS_CLOSED);
            l.socket.finishClosed(c, true); // the engine, closed after this, reads its buffer no more
        }
        calls.clear();
        windows.clear(c -> {
            endTimers(c);
            l.count(ShellCounter.CALLS_FAILED);
            l.count(ShellCounter.CALLS_CLOSED);
            l.socket.finishClosed(c, true); // never reached the engine: its buffer is still ours
        });
    }
}
