package io.homa.internal.loop;

import io.homa.core.Counter;
import io.homa.core.EngineConfig;
import io.homa.core.EngineEvent;
import io.homa.core.HomaEngine;
import io.homa.core.OutgoingPayload;
import io.homa.core.PayloadReleaseListener;
import io.homa.core.ReceivedMessage;
import io.homa.core.RpcIds;
import io.homa.core.RpcState;
import io.homa.core.Transmit;
import io.homa.core.psp.PspFormat;
import io.homa.core.psp.PspOpener;
import io.homa.core.psp.PspSealer;
import io.homa.core.wire.DropReason;
import io.homa.core.wire.PacketDecoder;
import io.homa.core.wire.WireFormat;
import io.homa.internal.observe.JfrEvents;
import io.homa.internal.observe.MetricsSnapshot;
import io.homa.internal.observe.ShellCounter;
import io.homa.internal.rpc.ClientCall;
import io.homa.internal.rpc.DeadlineQueue;
import io.homa.internal.rpc.Dispatcher;
import io.homa.internal.rpc.UserPayload;
import io.homa.internal.transport.ReadTakeover;
import io.homa.internal.transport.WaiterEpoll;
import io.homa.internal.udp.DatagramOpener;
import io.homa.internal.udp.DatagramWriter;
import io.homa.internal.udp.DirectReader;
import io.homa.internal.udp.FaultInjector;
import io.homa.internal.udp.NettyPayloadMemory;
import io.homa.internal.udp.ReceiveDrain;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.channel.SelectStrategy;
import io.netty.channel.socket.DatagramPacket;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Drives one {@link HomaEngine} from one Netty event loop. One turn of the loop is: an input
 * (received datagrams from the {@link ReceiveDrain}, the timer, or a batch of commands from other
 * threads), then {@link #drain()}: the engine's
 * events go to the client side ({@link ClientCalls}) or the server side ({@link ServedRequests}),
 * its datagrams to the {@link DatagramWriter}, the writes are flushed once, and the one timer is
 * re-armed at the engine's next deadline (only when that moved earlier; a spurious timer is
 * harmless).
 *
 * <p>Received datagrams go to the engine in the order the {@link ReceiveDrain} chooses: control
 * packets and short messages as they are read, long messages' data in large datagrams after the
 * loop's current I/O round. The engine is drained once per read batch ({@code channelReadComplete})
 * and once after the deferred data. While the engine is nearly idle, a loop woken for a readable
 * socket reads a lone datagram itself, past Netty, and drains after it unless Netty's read follows
 * ({@link #readAsLoop}). With several event loops on one port, a datagram about one of
 * our client RPCs (odd sender id) that the kernel delivered to another loop is passed to the loop
 * whose engine owns the RPC (its index is in the id's low bits).
 *
 * <p>Threads: the engine, and everything here that serves it (calls, requests, deadlines, the
 * writer, the counters), is guarded by one lock, the <em>engine lock</em>. The loop holds it for
 * each of its turns. A command from another thread (a call, a reply from a handler thread, a
 * cancellation) is a turn too: when the caller finds the lock free, the engine idle (fewer
 * than {@link #CALLER_TURN_MAX_LIVE_RPCS} live RPCs) and the loop not already due to run queued
 * commands, it runs the turn itself, commands queued before it first, and its datagrams leave by the {@link DatagramWriter}'s direct route (a system
 * call on the channel's socket, not a task for the loop), so the loop is not woken at all; when the
 * lock is taken, the engine busy or the loop due, it queues the command for the loop, whose batch
 * it then joins.
 * The loop spins briefly rather than park when a caller holds the lock. This caller turn is the
 * Linux Homa {@code sendmsg} path: the caller's thread sends its own request. It is on where every channel is a native one (epoll, io_uring) and no faults
 * are injected ({@code HomaConfig.callerSends()}).
 *
 * <p>The way back is the caller's too ({@code HomaConfig.callerReads}, {@link #awaiting}): a
 * thread blocked on its call's future becomes, while the engine has nothing else live, the reader
 * of this loop's sockets. The loop's epoll instance leaves their data to it ({@link ReadTakeover}),
 * it sleeps on them with an epoll instance of its own ({@link WaiterEpoll}), and it handles what
 * arrives in turns of its own, so the response wakes that thread and not the loop. Its future
 * completes on it once it gave the sockets back. Whoever else ends the call kicks it awake
 * ({@link #finished}).
 *
 * <p>Buffers: every {@code ByteBuf} the user handed over is read by the engine through its call or
 * request object ({@link io.homa.internal.rpc.UserPayload}) and released when the engine says it
 * stopped reading it, at the latest when {@link #closeOnLoop} closes the engine. Received payloads are
 * the engine's through {@link NettyPayloadMemory} (retained datagrams, pooled chunks) until
 * it delivers them; a response then belongs to its call (released if nobody takes it), a request to
 * its request object (released when answered or dropped; requests still open at close are dropped).
 */
final class EngineLoop {
    private static final Logger log = LoggerFactory.getLogger(EngineLoop.class);
    /** A coalesced datagram is split among loops only up to this many packets (the engine drops longer ones). */
    private static final int MAX_SPLIT_PACKETS = 128;
    /**
     * How long a thread that finds the engine lock taken spins before it parks. Bounded in time,
     * not in spins: a spin's pause instruction takes from a few cycles to over a hundred by CPU
     * (2,000 spins, once the bound here, took 55 us on this project's AMD EPYC test machine).
     * A turn holds the lock for a few microseconds; a holder that holds it much longer was
     * preempted, often by the spinner's own wake-up on two cores, and then spinning only keeps
     * it from a core.
     */
    private static final long LOCK_SPIN_NANOS = 5_000;
    /** Spins between two looks at the clock while spinning for the lock. */
    private static final int SPINS_PER_CLOCK_LOOK = 32;
    /** Datagrams a waiting caller reads from one socket per look; the loop reads whatever it leaves. */
    private static final int POLL_BATCH = 16;
    /**
     * Longest sleep of a waiting caller on the sockets before it looks at its future again: a
     * bound on what a missed kick could cost, not a period anyone should meet ({@link #finished}).
     */
    private static final int WAIT_MILLIS = 20;
    /** {@code Thread.isVirtual()} where the JDK has it (21 and later), else null. */
    private static final java.lang.invoke.MethodHandle IS_VIRTUAL = isVirtualHandle();
    /** How long a busy-polling loop keeps sleeping after a caller that read the sockets stopped spinning. */
    private static final long RECENT_SPIN_NANOS = 1_000_000;
    /** How often a loop whose readers tick the engine wakes to see whether they still come ({@link #startReaderTicks}). */
    private static final long WATCHDOG_NANOS = 20_000_000;
    /** Servers whose socket {@link #socketOfPeer} remembers, at most (then it starts over). */
    private static final int MAX_PEERS_REMEMBERED = 4096;
    /**
     * A caller runs its own turn only while the engine has fewer live RPCs than this: an idle
     * socket (the latency case: one call at a time, or one reply). Under load the loop is at work
     * anyway, and a command queued for it joins its batch (one drain, one flush, one sendmmsg for
     * many calls), where turns of their own would each make a system call and contend for the lock.
     */
    private static final int CALLER_TURN_MAX_LIVE_RPCS = 2;
    /**
     * A waiting caller reads the sockets itself only while the engine has no more live RPCs than
     * this, its own included: beside other calls' traffic (a 1 MB echo in flight) the loop's
     * batched reads serve every call better, and the caller parks.
     */
    private static final int READER_MAX_LIVE_RPCS = 1;
    /**
     * The loop reads its sockets itself, past Netty ({@link #readAsLoop}, and a busy-polling loop's
     * {@link #readAsSpinningLoop}), only while the engine has no more live RPCs than this: a
     * socket that serves or makes a call or two at a time, the latency case. Under load Netty's
     * batched reads and the receive drain serve better.
     */
    private static final int LOOP_READ_MAX_LIVE_RPCS = 2;
    /**
     * A busy-polling loop whose own looks cover its sockets makes Netty's select only every this
     * many turns (a few microseconds): each one is a system call that delays the next look.
     */
    private static final int LOOKS_PER_SELECT = 8;

    final EventLoop loop;
    /** The socket's loops together: the calls in flight, the TCP fallback, the handler. */
    final EngineLoops socket;
    final HomaEngine engine;
    final EngineConfig engineConfig;
    final Dispatcher dispatcher;
    /** This loop's shell counters, by {@link ShellCounter} ordinal. */
    final long[] shell = new long[ShellCounter.values().length];
    /** The deadlines of the calls started here and the timeouts of the requests received here. */
    final DeadlineQueue deadlines;
    final ClientCalls calls;
    final ServedRequests requests;
    /** The TCP fallback's part of this loop, or null when it is off. */
    final FallbackProbes fallback;
    private final NettyPayloadMemory memory = new NettyPayloadMemory();
    private final List<Channel> channels = new ArrayList<>();
    private final CommandQueue commands;
    /** Host SRPT: the order in which received datagrams reach the engine. */
    private final ReceiveDrain receiveDrain;
    private DatagramWriter writer;
    /**
     * Reads of this loop's sockets past Netty's, under the engine lock: a waiting caller's (see
     * {@link #awaiting}), and the loop's own ({@link #readAsLoop}, {@link #readAsSpinningLoop}, the
     * timer's); null when off.
     */
    private DirectReader reader;
    /** Where a waiting caller sleeps on this loop's sockets itself (callerReads); null when it does not. */
    private WaiterEpoll waiterEpoll;
    /**
     * The spinning waiter's own reads of the one socket its response comes to ({@link #spinRead}),
     * made outside the engine lock (the waiter is one thread at a time: {@link #waiterEpoll}'s
     * enter); null with {@link #waiterEpoll}.
     */
    private DirectReader waiterReader;
    /** The waiter is in such a read: closing waits for it to end before the sockets close. */
    private volatile boolean waiterInRead;
    /** Takes the sockets' data from the loop's own epoll instance while a caller waits on them. */
    private ReadTakeover takeover;
    /**
     * Busy polling: where the spinning loop looks at its sockets before each select, to read them
     * itself ({@link #readAsSpinningLoop}); null when it does not busy-poll or cannot read directly
     * (and until {@link #attach} has done all else: the loop spins before that). Null again, for
     * good, after such a read failed: Netty reads then.
     */
    private volatile WaiterEpoll spinEpoll;
    /** A read of {@link #readAsLoop} failed: the loop leaves its sockets to Netty from then on (loop only). */
    private boolean loopReadsFailed;
    /** The loop's last look at its sockets covered them (loop only; {@link #busyChoice}). */
    private boolean lookCovered;
    /** Turns of the busy-polling loop since Netty's last select (loop only). */
    private int looksSinceSelect;
    /** The descriptors of {@link #channels}, in order (for {@link #waiterEpoll}'s events). */
    private int[] socketFds = new int[0];
    /** Each socket's descriptor alone (what a waiter takes over when it knows where its response comes). */
    private int[][] socketFd = new int[0][];
    /**
     * On which socket each server's datagrams arrived last (index into {@link #socketFds}): with
     * priority sockets the port has several, and the kernel spreads peers over them by address,
     * so a waiter takes over only the one its response will come to (two system calls rather than
     * two per socket). Written under the engine lock by waiters that read; bounded.
     */
    private final java.util.concurrent.ConcurrentHashMap<InetSocketAddress, Integer> socketOfPeer =
            new java.util.concurrent.ConcurrentHashMap<>();
    /** The call whose thread waits on the sockets now, or null. */
    private volatile ClientCall<?> waiter;
    /** The sockets {@link #waiter} took over (bit i: socket i; -1: all), for the loop's timer. */
    private volatile int waiterSockets = -1;
    /** Busy polling: spinning readers tick the engine instead of the loop's timer ({@link #startReaderTicks}). */
    private volatile boolean readerTicks;
    /** When the engine's timer is next due ({@link HomaEngine#nextDeadline()}, as the last drain left it). */
    private volatile long tickDue = Long.MAX_VALUE;
    private final Runnable startReaderTicks = this::startReaderTicks;
    private final Runnable stopReaderTicks = this::stopReaderTicks;
    private final Runnable watchdog = this::watchdogFired;
    /** Whether the watchdog's task is scheduled (loop only): one chain of it at a time. */
    private boolean watchdogArmed;
    /** When a caller that read the sockets last stopped spinning on them ({@link System#nanoTime()}). */
    private volatile long lastSpinEnded = System.nanoTime() - RECENT_SPIN_NANOS;
    /** The call whose reader {@link #finishing} kicked last (cleared when the next reader starts). */
    private volatile ClientCall<?> kicked;
    /** Whether that thread sleeps in {@link #waiterEpoll} now (or is about to: its future was not done). */
    private volatile boolean waiterAsleep;
    /** How long a caller waiting for its response reads the sockets itself before it parks. */
    private long callerSpinNanos;
    /** Busy polling: the loop stopped reading its sockets while callers spin on them (written on the loop). */
    private volatile boolean readsPaused;
    private final Runnable resumeReads = this::resumeReadsOnLoop;
    private EngineLoop[] siblings = {this};
    /** Opens every datagram read when the socket is secured (before anything else sees it); null when not. */
    private DatagramOpener opener;

    /** Guards the engine and all that serves it: see the class comment. */
    private final ReentrantLock engineLock = new ReentrantLock();
    /** Whether a command's thread may run its turn itself (see the class comment); fixed by {@link #attach}. */
    private boolean callerTurns;
    /** The timer's task: a turn of the loop under the engine lock. */
    private final Runnable timerTask = () -> locked(this::onTimer);
    private final Runnable readComplete = this::onReadComplete;
    private final Runnable drainTask = this::drain;

    private ScheduledFuture<?> timer;
    private long timerDeadline = Long.MAX_VALUE;
    /** See {@link #recentLagNanos()}. */
    private long lagNanos;
    /** A timer task found datagrams held in the receive drain: the drain after them ticks the engine. */
    private boolean tickOwed;
    /** The timer task is reading the sockets before its tick: drains meanwhile leave the timer to it. */
    private boolean inTimer;
    private boolean draining;
    private boolean drainAgain;
    private boolean readPending;
    private volatile boolean closed;
    /** Entries into the engine by a thread without the engine lock: a bug, which tests look for. */
    private final AtomicLong unguardedEntries = new AtomicLong();

    EngineLoop(EngineLoops socket, EventLoop loop, EngineConfig engineConfig, long seed, Dispatcher dispatcher) {
        this.socket = socket;
        this.loop = loop;
        this.engineConfig = engineConfig;
        this.engine = new HomaEngine(engineConfig, seed);
        this.dispatcher = dispatcher;
        this.commands = new CommandQueue(loop, this::runQueuedCommands);
        this.deadlines = new DeadlineQueue(loop, engineLock);
        this.calls = new ClientCalls(this, socket.config.maxCallsPerServer());
        this.requests = new ServedRequests(this, socket.config.requestTimeout());
        this.fallback = socket.config.tcpFallback() ? new FallbackProbes(this, socket.config) : null;
        engine.setPayloadReleaseListener(new PayloadReleaseListener() {
            @Override
            public void released(ByteBuffer payload) { // the shell gives the engine none: every payload is a UserPayload
            }

            @Override
            public void released(OutgoingPayload payload) {
                ((UserPayload) payload).releasePayload();
            }
        });
        engine.setPayloadMemory(memory);
        engine.setObserver(JfrEvents.observer(calls::startedNanos));
        // Its task for deferred datagrams is a turn of the loop, under the engine lock.
        Executor lockedLoop = task -> loop.execute(() -> locked(task));
        this.receiveDrain = new ReceiveDrain(this::onDatagram, lockedLoop, this::onReadComplete,
                engineConfig.unscheduledLimit(), ReceiveDrain.MIN_BULK_DATAGRAM_BYTES, ReceiveDrain.MAX_DEFERRED_BYTES,
                shell);
    }

    /**
     * Gives this loop its channels (the one of each priority level) once they are bound, on the
     * opening thread before they start reading (which then happens on the loop, after this).
     */
    void attach(Channel[] byLevel, boolean gso, FaultInjector faults, EngineLoop[] siblings, boolean callerSends,
                long callerSpinNanos, ReadTakeover takeover, int readBytes) {
        for (Channel ch : byLevel) {
            if (!channels.contains(ch)) {
                channels.add(ch);
            }
        }
        this.siblings = siblings;
        memory.allocator(byLevel[0].alloc());
        boolean secured = socket.config.secured();
        // Secured: the engine's datagrams are OVERHEAD shorter (HomaConfig), the sealed ones as long as plain ones.
        int reserve = (engineConfig.maxDatagram() + (secured ? PspFormat.OVERHEAD : 0)) * engineConfig.maxGsoSegments;
        this.writer = new DatagramWriter(byLevel, gso, faults, loop, shell, reserve, socket.config.engine().maxGsoSegments);
        if (secured) {
            io.homa.internal.tls.PeerKeys peerKeys = socket.peerKeys();
            if (peerKeys == null) { // pre-shared keys
                writer.sealWith(PspSealer.withProvider(socket.config.security(), socket.config.cipherProvider()), null, 0);
                this.opener = new DatagramOpener(new PspOpener(socket.pspState, socket.config.cipherProvider()), shell, byLevel[0].alloc(), null);
            } else { // mutual TLS: each peer's keys, this loop's of them
                int index = java.util.Arrays.asList(siblings).indexOf(this);
                writer.sealWith(new PspSealer(socket.config.cipherProvider()), to -> peerKeys.sendKey(to, index), socket.config.tls().pspVersion());
                this.opener = new DatagramOpener(new PspOpener(socket.pspState, socket.config.cipherProvider()), shell, byLevel[0].alloc(), peerKeys::allows);
            }
        }
        this.callerTurns = callerSends && faults == null && writer.sendsDirectly();
        if (callerTurns && (callerSpinNanos > 0 || takeover != null)) {
            this.reader = DirectReader.of(channels, readBytes);
            this.callerSpinNanos = callerSpinNanos;
            if (takeover != null && reader != null) {
                this.socketFds = new int[channels.size()];
                this.socketFd = new int[channels.size()][];
                for (int i = 0; i < socketFds.length; i++) {
                    socketFds[i] = ((io.netty.channel.unix.UnixChannel) channels.get(i)).fd().intValue();
                    socketFd[i] = new int[] {socketFds[i]};
                }
                this.waiterEpoll = WaiterEpoll.watching(socketFds);
                this.takeover = waiterEpoll == null ? null : takeover;
                this.waiterReader = waiterEpoll == null ? null : DirectReader.of(channels, readBytes);
            }
        }
        // The channels are bound (so any earlier process on this port is gone) and read nothing yet:
        // the engine's incarnation starts now. Reads start after this, on the loop, which sees it.
        engine.startReceiving(System.nanoTime());
    }

    /**
     * Starts reading this loop's sockets, once the whole socket is open (its request factory
     * works): the channels were bound with auto-read off. The loop's own reads past Netty's
     * ({@link #readAsLoop}, a busy-polling loop's looks) start here too, so that they never read
     * before Netty would; auto-read stays on from here where they exist (only the busy-polling
     * path without a waiter's epoll instance pauses it, {@link #yieldToSpinningCaller}).
     */
    void startReading() {
        if (waiterEpoll != null) {
            // Before auto-read: these run only once Netty reports a socket readable, which it
            // does only from then on.
            for (int i = 0; i < socketFds.length; i++) {
                int s = i;
                takeover.readFirst(socketFds[i], () -> readAsLoop(s));
            }
        }
        for (Channel ch : channels) {
            ch.config().setAutoRead(true);
        }
        if (waiterEpoll != null && socket.config.busyPoll()) {
            // After auto-read (a busy-polling loop spins already and looks as soon as it sees
            // this; volatile).
            this.spinEpoll = WaiterEpoll.watching(socketFds);
        }
    }

    /** A new inbound handler for one of this loop's channels. */
    Inbound newInbound() {
        return new Inbound();
    }

    boolean isClosed() {
        return closed;
    }

    /** Counts one event of the shell (on the loop). */
    void count(ShellCounter c) {
        shell[c.ordinal()]++;
    }

    // ------------------------------------------------------------------ the engine lock

    /** Whether this thread holds the engine lock (is in a turn: the loop's, or a caller's own). */
    boolean inEngine() {
        return engineLock.isHeldByCurrentThread();
    }

    /** Entries into the engine made without the engine lock so far (always 0 unless the shell has a bug). */
    long unguardedEntries() {
        return unguardedEntries.get();
    }

    /** Counts (and logs) an entry into the engine by a thread that does not hold the engine lock. */
    private void checkGuarded(String where) {
        if (!engineLock.isHeldByCurrentThread()) {
            unguardedEntries.incrementAndGet();
            log.error("Homa engine entered without its lock ({}, on {}): a bug in the shell", where,
                    Thread.currentThread().getName());
        }
    }

    /**
     * Takes the engine lock. A caller's turn holds it for microseconds, so a thread that finds it
     * taken spins for up to {@link #LOCK_SPIN_NANOS} before it parks: a parked loop would need a
     * wake-up of its own.
     */
    private void lock() {
        if (engineLock.tryLock()) {
            return;
        }
        long start = System.nanoTime();
        for (int i = 1; ; i++) {
            Thread.onSpinWait();
            if (engineLock.tryLock()) {
                return;
            }
            if (i % SPINS_PER_CLOCK_LOOK == 0 && System.nanoTime() - start > LOCK_SPIN_NANOS) {
                break;
            }
        }
        engineLock.lock();
    }

    /** Runs {@code action} under the engine lock (this thread may hold it already). */
    void locked(Runnable action) {
        lock();
        try {
            action.run();
        } finally {
            engineLock.unlock();
        }
    }

    // ------------------------------------------------------------------ hand-offs into the loop

    /**
     * Runs {@code command} in a turn of the engine: at once if this thread is in one or is the
     * loop's; as a turn of the calling thread's own if caller turns are on, the engine lock is free
     * and the engine idle (see the class comment); else through the command queue. A command must
     * cope with running after close (it then only fails or releases), and may even run on the closing thread
     * once the loop has ended ({@link #runLeftoverCommands}).
     */
    void runOnLoop(Runnable command) {
        if (engineLock.isHeldByCurrentThread()) {
            command.run();
        } else if (loop.inEventLoop()) {
            locked(command);
        } else if (callerTurns && !commands.loopDue() && engineLock.tryLock()) {
            // Not while the loop is due to run queued commands: this one joins their batch (one
            // drain, one flush, batched sends) rather than send them one datagram per system call.
            boolean idle = engine.liveClientRpcs() + engine.liveServerRpcs() < CALLER_TURN_MAX_LIVE_RPCS;
            try {
                if (idle) {
                    count(ShellCounter.CALLER_TURNS);
                    runCommands(command);
                }
            } finally {
                engineLock.unlock();
            }
            if (!idle) {
                commands.submit(command);
            }
        } else {
            commands.submit(command);
        }
    }

    /**
     * A caller waits for {@code c}'s future, for at most {@code timeoutNanos} here (any thread but
     * the loop's; it parks as usual afterwards if the future is not done). Where callers read
     * ({@link #waiterEpoll}) and the engine is idle, it becomes the sockets' reader for the wait
     * ({@link #readWhileWaiting}): it spins on them for up to the configured caller spin, then
     * sleeps on them. Elsewhere (io_uring, several loops) it only spins, if configured, as the
     * loop reads too ({@link #spinOn}). Either way a response that comes meanwhile is handled in
     * this thread's own turn, so that neither the loop's wake-up nor the caller's unpark is on its
     * way, and the future completes on this thread ({@link io.homa.internal.rpc.Dispatcher#succeed}).
     */
    void awaiting(ClientCall<?> c, long timeoutNanos) {
        Thread me = Thread.currentThread();
        if (reader == null || loop.inEventLoop() || engineLock.isHeldByCurrentThread() || closed
                || me.isInterrupted() || isVirtual(me) || !c.claimWaiter()) {
            return; // parks as usual (a virtual thread must not pin its carrier in a system call)
        }
        long start = System.nanoTime();
        try {
            if (waiterEpoll != null) {
                readWhileWaiting(c, start, timeoutNanos);
            } else if (callerSpinNanos > 0) {
                spinOn(c, Math.min(callerSpinNanos, timeoutNanos));
            }
        } finally {
            c.releaseWaiter();
            // After the sockets were given back: stages chained on the future run here, and one
            // that waits for another call of this socket must not find them still held.
            c.completeDeferred();
        }
    }

    /** Spins for up to {@code spinNanos}, reading the sockets beside the loop ({@link #awaiting}). */
    private void spinOn(ClientCall<?> c, long spinNanos) {
        long until = System.nanoTime() + spinNanos;
        socket.callersSpinning.incrementAndGet(); // a busy-polling loop sleeps meanwhile
        try {
            while (!c.ended() && !closed && System.nanoTime() - until < 0 && !Thread.currentThread().isInterrupted()) {
                if (engineLock.tryLock()) {
                    try {
                        if (!closed) {
                            readSockets(-1, c);
                        }
                    } finally {
                        engineLock.unlock();
                    }
                }
                Thread.onSpinWait();
            }
        } finally {
            // After the count (see yieldToSpinningCaller): a loop asleep with its reads paused
            // for spinning callers gets them back when the last one stops.
            if (socket.callersSpinning.decrementAndGet() == 0 && readsPaused) {
                try {
                    loop.execute(resumeReads);
                } catch (RejectedExecutionException e) {
                    // closing
                }
            }
        }
    }

    /**
     * The caller becomes the reader of the sockets until {@code c}'s future is done: the loop's
     * own epoll instance leaves their data to it meanwhile ({@link ReadTakeover}), so a datagram
     * wakes this thread alone (the loop keeps its timers and tasks, and gets the sockets back,
     * with whatever waits on them, when this thread stops). It spins for up to the caller spin
     * (a busy-polling loop sleeps meanwhile: one spinning thread per side), then sleeps on the
     * sockets; each batch of datagrams is read and handled in a turn of its own. Returns at once
     * if another thread reads already (that one reads for both: this one's future is completed
     * and it is unparked as usual) or the engine is busy (the loop's batched reads serve every
     * call better than one caller's), and when the engine gets busy while it reads.
     */
    private void readWhileWaiting(ClientCall<?> c, long start, long timeoutNanos) {
        if (!idle() || !waiterEpoll.enter()) {
            return;
        }
        Integer known = socketOfPeer.get(c.server);
        int[] taken = known == null ? socketFds : socketFd[known];
        try {
            kicked = null;
            waiterSockets = known == null ? -1 : 1 << known;
            waiter = c; // before the look at the future: its completer looks at this after completing
            takeover.take(taken, true);
            long spin = Math.min(callerSpinNanos, timeoutNanos);
            if (spin > 0) {
                socket.callersSpinning.incrementAndGet(); // a busy-polling loop sleeps meanwhile
                try {
                    while (!c.ended() && !closed && System.nanoTime() - start < spin && !Thread.currentThread().isInterrupted()) {
                        if (!(known != null && waiterReader != null ? spinRead(c, known) : readReady(c, waiterEpoll.await(0)))) {
                            return;
                        }
                        if (readerTicks && System.nanoTime() - tickDue >= 0) {
                            tickAsReader();
                        }
                    }
                } finally {
                    lastSpinEnded = System.nanoTime();
                    socket.callersSpinning.decrementAndGet();
                }
            }
            while (!c.ended() && !closed && !waiterEpoll.closing() && !Thread.currentThread().isInterrupted()) {
                long left = timeoutNanos - (System.nanoTime() - start);
                if (left <= 0) {
                    return;
                }
                if (readerTicks) { // the reader ticks the engine meanwhile: wake for it
                    long untilTick = tickDue - System.nanoTime();
                    if (untilTick <= 0) {
                        tickAsReader();
                        continue;
                    }
                    left = Math.min(left, untilTick);
                }
                // Never longer than WAIT_MILLIS (an untimed get() passes Long.MAX_VALUE: no rounding up of that).
                int millis = left >= WAIT_MILLIS * 1_000_000L ? WAIT_MILLIS : (int) Math.max(1, (left + 999_999) / 1_000_000);
                int n = 0;
                waiterAsleep = true; // before the look at the future: see finished()
                if (!c.isDone()) {
                    n = waiterEpoll.await(millis);
                }
                waiterAsleep = false;
                if (!readReady(c, n)) {
                    return;
                }
            }
        } finally {
            takeover.take(taken, false);
            waiter = null;
            waiterEpoll.leave();
        }
    }

    /**
     * A spinning caller's look at the one socket its response comes to (known from its server's
     * earlier datagrams, {@link #socketOfPeer}): a {@code recvfrom} at once, where a look through
     * {@link #waiterEpoll} would make an {@code epoll_wait} and then the {@code recvfrom}, one
     * system call more when the response is there. The read is made outside the engine lock, so
     * that an empty look holds nothing others need (a thread starting a call takes its own turn
     * meanwhile); a datagram read then goes to the engine in a turn of this thread's. False when
     * the caller should stop reading, as for {@link #readReady}: another thread ends the call, the
     * engine got busy, or the socket is closing.
     */
    private boolean spinRead(ClientCall<?> c, int socketIndex) {
        if (kicked == c) {
            return false;
        }
        DatagramPacket p;
        waiterInRead = true; // then the look at closed: closeLocked sets closed, then waits for this to clear
        try {
            if (closed) {
                return false;
            }
            p = waiterReader.read(socketIndex);
        } finally {
            waiterInRead = false;
        }
        if (p == null) {
            return true;
        }
        lock();
        try {
            if (closed) {
                p.release();
                return false;
            }
            count(ShellCounter.CALLER_READS);
            // What else waits there goes on in this turn (the lock keeps the socket open meanwhile).
            for (int n = 1; handOn(p, socketIndex, true, c) && n < POLL_BATCH; n++) {
                p = waiterReader.read(socketIndex);
                if (p == null) {
                    break;
                }
            }
            onReadComplete();
            return kicked != c && liveRpcs() <= READER_MAX_LIVE_RPCS;
        } finally {
            engineLock.unlock();
        }
    }

    /**
     * Reads the sockets that {@link #waiterEpoll}'s last wait found readable ({@code n} events),
     * in a turn of this thread's. False when the caller should stop reading: waiting failed, or
     * the engine got busy.
     */
    private boolean readReady(ClientCall<?> c, int n) {
        if (n < 0) {
            return false;
        }
        int readable = 0;
        boolean kick = false;
        for (int i = 0; i < n; i++) {
            int socket = socketOf(waiterEpoll.fd(i));
            if (socket >= 0) {
                readable |= 1 << socket;
            } else if (kicked == c) {
                kick = true; // another thread ends the call (finishing): wait in the future's own way
            } // else a kick meant for an earlier reader, or for this one once its call ended: nothing to do
        }
        if (readable == 0) {
            return !kick;
        }
        lock();
        try {
            if (!closed) {
                readSockets(readable, c);
            }
            return !kick && liveRpcs() <= READER_MAX_LIVE_RPCS;
        } finally {
            engineLock.unlock();
        }
    }

    /**
     * Whether the engine is idle enough for a caller to wait on the sockets (no more live RPCs
     * than a caller's turn allows, counting its own): under load the loop is at work anyway, and
     * its batched reads serve every call better than one caller's. False when the lock is taken.
     */
    private boolean idle() {
        if (!engineLock.tryLock()) {
            return false;
        }
        try {
            return liveRpcs() <= READER_MAX_LIVE_RPCS;
        } finally {
            engineLock.unlock();
        }
    }

    private static java.lang.invoke.MethodHandle isVirtualHandle() {
        try {
            return java.lang.invoke.MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual",
                    java.lang.invoke.MethodType.methodType(boolean.class));
        } catch (ReflectiveOperationException e) {
            return null; // JDK 17: no virtual threads
        }
    }

    /** Whether {@code t} is a virtual thread, which must not block in a system call of ours (it would pin its carrier). */
    private static boolean isVirtual(Thread t) {
        try {
            return IS_VIRTUAL != null && (boolean) IS_VIRTUAL.invokeExact(t);
        } catch (Throwable e) {
            return false;
        }
    }

    private int liveRpcs() {
        return engine.liveClientRpcs() + engine.liveServerRpcs();
    }

    /** Which of this loop's sockets {@code fd} is (an index into {@link #socketFds}), or -1 (the kick). */
    private int socketOf(int fd) {
        for (int i = 0; i < socketFds.length; i++) {
            if (socketFds[i] == fd) {
                return i;
            }
        }
        return -1;
    }

    /**
     * {@code c}'s future completed while a thread waited for it (any thread). If that thread sleeps
     * on the sockets, it is kicked awake (an unpark cannot reach it there).
     */
    void finished(ClientCall<?> c) {
        // Not when finishing() kicked it already: a second kick would outlive this reader.
        if (waiter == c && waiterAsleep && !c.waitedOnBy(Thread.currentThread()) && kicked != c) {
            waiterEpoll.kick();
        }
    }

    /**
     * Another thread is about to complete {@code c}'s future (any thread). If a thread reads for
     * it, it is kicked now, before the completion runs the future's stages: it stops reading
     * ({@link #readReady} leaves on a kick) and waits in the future's own way, so that, as a
     * parked {@code get()}, it is woken before those stages rather than after them.
     */
    void finishing(ClientCall<?> c) {
        if (waiter == c) {
            kicked = c;
            waiterEpoll.kick();
        }
    }

    /**
     * Busy polling, on the loop before its select (no tasks waiting): {@code SelectStrategy.SELECT}
     * to sleep while a caller spins ({@link #yieldToSpinningCaller}); {@code SelectStrategy.CONTINUE}
     * when the loop's own look at its sockets covered them ({@link #readAsSpinningLoop}) and
     * Netty's select was made less than {@link #LOOKS_PER_SELECT} of these turns ago (a turn with
     * tasks selects without asking, so it is at least that often): it only finds what
     * the look leaves (a socket's writability, the TCP fallback's and key exchange's channels,
     * errors), which may wait that long; 0: select now.
     */
    int busyChoice() {
        lookCovered = false;
        if (yieldToSpinningCaller()) {
            looksSinceSelect = 0;
            return SelectStrategy.SELECT;
        }
        if (lookCovered && ++looksSinceSelect < LOOKS_PER_SELECT) {
            return SelectStrategy.CONTINUE;
        }
        looksSinceSelect = 0;
        return 0;
    }

    /**
     * Busy polling, on the loop before its select: while a caller spins on the sockets (and reads
     * them itself), the loop stops reading them (no epoll interest, so an arriving datagram does
     * not wake it) and sleeps; it reads and spins again once the last caller stopped.
     */
    boolean yieldToSpinningCaller() {
        if (waiterEpoll != null) {
            // A spinning caller reads as the sockets' reader (the loop's epoll instance leaves
            // their data to it): nothing to pause. The loop sleeps while one spins, and for a
            // moment after, until its next call: a datagram, a task or the watchdog wakes it.
            if (readsPaused) {
                resumeReadsOnLoop();
            }
            boolean yield = !closed && (socket.callersSpinning.get() > 0 || System.nanoTime() - lastSpinEnded < RECENT_SPIN_NANOS);
            if (yield != readerTicks) {
                locked(yield ? startReaderTicks : stopReaderTicks);
            }
            WaiterEpoll look = spinEpoll;
            if (!yield && look != null && waiter == null) { // a waiter asleep on the sockets reads its own
                readAsSpinningLoop(look);
            }
            return yield;
        }
        if (socket.callersSpinning.get() == 0 || closed) {
            if (readsPaused) {
                resumeReadsOnLoop();
            }
            return false;
        }
        if (!readsPaused) {
            readsPaused = true; // before the second look at the count: the caller checks the two in the other order
            for (Channel ch : channels) {
                ch.config().setAutoRead(false);
            }
            if (socket.callersSpinning.get() == 0) {
                resumeReadsOnLoop();
                return false;
            }
        }
        return true;
    }

    /**
     * Busy polling, on the spinning loop before its select: what waits on its sockets is read here,
     * a look with {@code epoll_wait(0)} on an epoll instance of its own and then one
     * {@code recvfrom} per datagram, and handled in a turn of the loop's ({@link #readSockets}),
     * rather than by Netty's read of the sockets (a {@code getsockopt} and a {@code recvmmsg} per
     * read, and the pipeline). Only while the engine is nearly idle ({@link #LOOP_READ_MAX_LIVE_RPCS}):
     * under load Netty's batched reads and the receive drain's host SRPT serve better. What arrives between
     * this look and the select, or is left here, Netty reads as before; both go to the same engine
     * on this thread. Runs inside Netty's select strategy, where a failure would stop the loop: a
     * read that fails ends these reads for good (logged), and Netty reads everything from then on.
     */
    private void readAsSpinningLoop(WaiterEpoll look) {
        if (!look.enter()) {
            return; // closing
        }
        boolean failed = false;
        try {
            int n = look.await(0);
            int readable = 0;
            for (int i = 0; i < n; i++) {
                int s = socketOf(look.fd(i));
                if (s >= 0) {
                    readable |= 1 << s;
                }
            }
            if (readable == 0) {
                lookCovered = true;
            } else {
                lock();
                try {
                    if (!closed && !receiveDrain.holding() && liveRpcs() <= LOOP_READ_MAX_LIVE_RPCS) {
                        readSockets(readable, null);
                        lookCovered = true;
                    }
                } finally {
                    engineLock.unlock();
                }
            }
        } catch (RuntimeException | OutOfMemoryError e) {
            failed = true;
            spinEpoll = null;
            log.warn("Homa: a busy-polling loop failed to read its sockets itself; Netty reads them from now on", e);
        } finally {
            look.leave();
            if (failed) {
                look.close();
            }
        }
    }

    /**
     * The loop woke because socket {@code s} is readable (on the loop, inside Netty's handling of
     * its ready events, {@link ReadTakeover#readFirst}): while the engine is nearly idle
     * ({@link #LOOP_READ_MAX_LIVE_RPCS}), the loop reads one datagram itself with a
     * {@code recvfrom} and hands it on in a turn of its own, rather than through Netty's read (a
     * {@code getsockopt} and a {@code recvmmsg}, then the pipeline). That is the whole read when
     * the datagram is shorter than a full segment (a small request or response, a control packet):
     * what else waits is reported by the next {@code epoll_wait} (level-triggered), and the
     * one-at-a-time case makes no read that finds the socket empty. A full segment is likely
     * followed by more of its message: it goes the way Netty's reads go (through the receive
     * drain, for host SRPT), and false lets Netty read the rest in batches, its read round ending
     * in the drain. False too, with nothing read, while a message is arriving (bytes granted or
     * unscheduled not yet received: Netty's batches read its segments), under load, while the
     * receive drain holds datagrams, while a caller reads the sockets, when the socket had
     * nothing (a pending socket error, which the {@code recvfrom} takes, goes unreported, as for a
     * waiting caller's reads; an event that says so is Netty's), and for good after a failure here
     * (logged): Netty reads from then on.
     */
    private boolean readAsLoop(int s) {
        if (closed || waiter != null || loopReadsFailed) {
            return false;
        }
        lock();
        try {
            if (closed || waiter != null || receiveDrain.holding() || liveRpcs() > LOOP_READ_MAX_LIVE_RPCS
                    || engine.incomingBytes() > 0) {
                return false;
            }
            DatagramPacket p = reader.read(s);
            if (p == null) {
                return false;
            }
            count(ShellCounter.LOOP_DIRECT_READS);
            if (p.content().readableBytes() >= engineConfig.maxDatagram()) {
                if (opener == null || (p = opener.open(p)) != null) {
                    receiveDrain.offer(p);
                }
                return false;
            }
            handOn(p, s, false, null);
            onReadComplete();
            return true;
        } catch (RuntimeException | OutOfMemoryError e) {
            // Inside Netty's handling of ready events, where a failure would stall the loop.
            loopReadsFailed = true;
            count(ShellCounter.IO_ERRORS);
            log.warn("Homa: an event loop failed to read its socket itself; Netty reads it from now on", e);
            return false;
        } finally {
            engineLock.unlock();
        }
    }

    /**
     * Busy polling with spinning readers (on the loop, under the lock): the engine's timer would
     * wake the sleeping loop every tick (1 ms while calls are live), and on two cores its turn
     * preempts one of the spinning threads, which was the tail of such calls. So the loop cancels
     * it and the spinning reader ticks the engine instead ({@link #tickAsReader}); a watchdog
     * every {@link #WATCHDOG_NANOS} wakes the loop to see whether readers still come (between
     * their calls a tick may be that late).
     */
    private void startReaderTicks() {
        if (closed) {
            return;
        }
        readerTicks = true;
        cancelTimer();
        tickDue = engine.nextDeadline();
        if (!watchdogArmed) {
            watchdogArmed = true;
            loop.schedule(watchdog, WATCHDOG_NANOS, TimeUnit.NANOSECONDS);
        }
    }

    /** The readers stopped (on the loop, under the lock): the loop's timer serves the engine again. */
    private void stopReaderTicks() {
        readerTicks = false;
        if (!closed) {
            armTimer();
        }
    }

    /** The watchdog's task (on the loop): it woke the loop; it comes back while readers tick. */
    private void watchdogFired() {
        watchdogArmed = readerTicks && !closed;
        if (watchdogArmed) {
            loop.schedule(watchdog, WATCHDOG_NANOS, TimeUnit.NANOSECONDS);
        }
    }

    /** A spinning reader's turn at the engine's timer, once it is due ({@link #startReaderTicks}). */
    private void tickAsReader() {
        lock();
        try {
            long now = System.nanoTime();
            if (!closed && readerTicks && now - tickDue >= 0 && !receiveDrain.holding()) {
                engine.onTimer(now);
                drain();
            }
        } finally {
            engineLock.unlock();
        }
    }

    private void resumeReadsOnLoop() {
        if (!readsPaused) {
            return;
        }
        readsPaused = false;
        for (Channel ch : channels) {
            ch.config().setAutoRead(true);
        }
    }


    /**
     * Reads what waits on each socket of {@code mask} (bit i: socket i), up to a few datagrams
     * each (the rest stays readable: the sockets are level-triggered), into the engine, and drains
     * it; it stops early once {@code until}'s call has ended (its waiter saves the read that would
     * find the socket empty; what is left the loop reads once it has the sockets back). Under the
     * lock.
     */
    private void readSockets(int mask, ClientCall<?> until) {
        boolean read = false;
        for (int i = 0; i < reader.sockets(); i++) {
            if ((mask & (1 << i)) == 0) {
                continue;
            }
            for (int n = 0; n < POLL_BATCH; n++) {
                DatagramPacket p = reader.read(i);
                if (p == null) {
                    break;
                }
                if (!read) {
                    read = true;
                    if (until != null) { // else the loop reads: its timer, or busy polling
                        count(ShellCounter.CALLER_READS);
                    } else if (!inTimer) {
                        count(ShellCounter.BUSY_POLL_READS);
                    }
                }
                if (!handOn(p, i, mask != -1, until)) {
                    return;
                }
            }
        }
        if (read) {
            onReadComplete();
        }
    }

    /**
     * One datagram read from socket {@code i} to the engine (under the lock), having learnt where
     * its sender's datagrams arrive if {@code learn}; false once {@code until}'s call has ended
     * (the reader stops there).
     */
    private boolean handOn(DatagramPacket p, int i, boolean learn, ClientCall<?> until) {
        if (learn) {
            learnSocket(p.sender(), i);
        }
        if (opener != null && (p = opener.open(p)) == null) {
            return true; // refused and counted
        }
        onDatagram(p);
        if (until != null && engine.hasEvents()) {
            onReadComplete(); // a message came whole: drain, and stop at the waiter's own
            return !until.ended();
        }
        return true;
    }

    /** Remembers that {@code peer}'s datagrams arrive on socket {@code i} ({@link #socketOfPeer}). */
    private void learnSocket(InetSocketAddress peer, int i) {
        Integer known = socketOfPeer.get(peer);
        if (known == null || known != i) {
            if (socketOfPeer.size() >= MAX_PEERS_REMEMBERED) {
                socketOfPeer.clear();
            }
            socketOfPeer.put(peer, i);
        }
    }

    /** The command queue's batch: a turn of the loop. */
    private void runQueuedCommands() {
        lock();
        try {
            runCommands(null);
        } finally {
            engineLock.unlock();
        }
    }

    /**
     * Runs the queued commands, then {@code last} if not null, then drains the engine once for
     * all of them. Under the engine lock.
     */
    private void runCommands(Runnable last) {
        checkGuarded("commands");
        boolean outermost = !draining; // false cannot happen (a turn never starts inside a drain), but stay correct
        draining = true;
        try {
            commands.runAll(); // queued first: a command never overtakes one queued before it
            if (last != null) {
                last.run();
            }
        } finally {
            draining = !outermost;
        }
        if (outermost) {
            drain();
        }
    }

    /** Runs commands the loop never got to; only after the loop has terminated. */
    void runLeftoverCommands() {
        locked(commands::runAll);
    }

    // ------------------------------------------------------------------ inputs, on the loop

    private void onDatagram(DatagramPacket p) {
        ByteBuffer bytes = p.content().nioBuffer();
        if (siblings.length > 1) {
            int stride = PacketDecoder.packetLength(bytes, bytes.position(), bytes.remaining());
            if (stride > 0 && stride < bytes.remaining() && bytes.remaining() <= MAX_SPLIT_PACKETS * stride
                    && !oneOwner(bytes, stride)) {
                split(p, bytes, stride);
                return;
            }
            EngineLoop owner = owner(bytes);
            if (owner != this) {
                owner.commands.submit(() -> owner.forwarded(p, bytes)); // never a turn here: we hold our own lock
                return;
            }
        }
        try {
            receive(p, bytes);
        } finally {
            p.release(); // a message kept from it holds a reference to it
        }
    }

    /** Whether every packet of a coalesced datagram belongs to the same loop as its first. */
    private boolean oneOwner(ByteBuffer bytes, int stride) {
        EngineLoop first = owner(bytes, bytes.position(), bytes.remaining());
        for (int at = bytes.position() + stride; at < bytes.limit(); at += stride) {
            if (owner(bytes, at, bytes.limit() - at) != first) {
                return false;
            }
        }
        return true;
    }

    /**
     * A coalesced datagram whose packets belong to different loops (a NIC's GRO may merge one
     * peer's responses to RPCs of two loops): each packet goes on as a datagram of its own, a
     * retained slice, to its own loop. Without this a response segment would reach an engine that
     * does not know its RPC, which answers RPC_UNKNOWN and makes the server drop the RPC.
     */
    private void split(DatagramPacket p, ByteBuffer bytes, int stride) {
        try {
            ByteBuf content = p.content();
            for (int at = bytes.position(); at < bytes.limit(); at += stride) {
                int length = Math.min(stride, bytes.limit() - at);
                int index = content.readerIndex() + (at - bytes.position());
                onDatagram(new DatagramPacket(content.retainedSlice(index, length), p.recipient(), p.sender()));
            }
        } finally {
            p.release();
        }
    }

    /** A datagram another loop of this socket read for one of our client RPCs. */
    private void forwarded(DatagramPacket p, ByteBuffer bytes) {
        try {
            receive(p, bytes);
        } finally {
            p.release();
        }
        drain();
    }

    /** Feeds one datagram to the engine; {@code bytes} is its only view (one leak-detector record). */
    private void receive(DatagramPacket p, ByteBuffer bytes) {
        checkGuarded("receive");
        InetSocketAddress from = p.sender();
        int n = bytes.remaining();
        count(ShellCounter.DATAGRAMS_RECEIVED);
        boolean data = PacketDecoder.isData(bytes);
        shell[(data ? ShellCounter.BYTES_RECEIVED_DATA : ShellCounter.BYTES_RECEIVED_CONTROL).ordinal()] += n;
        if (closed) {
            return;
        }
        if (!readPending) {
            readPending = true;
            engine.beginBatch(); // one grant decision for the read round, made in drain()
        }
        if (fallback != null) {
            fallback.heardFrom(from);
        }
        memory.receiving(p.content(), bytes);
        try {
            engine.onDatagram(System.nanoTime(), from, bytes);
        } catch (RuntimeException e) { // the engine validates everything: this is a bug, but not the peer's win
            count(ShellCounter.DATAGRAMS_DROPPED);
            log.warn("Homa engine failed on a {}-byte datagram from {}; dropped", n, from, e);
        } finally {
            memory.receiving(null, null);
        }
    }

    /** {@code m} in memory of its own rather than in its datagram's read buffer (see {@link NettyPayloadMemory#detached}). */
    ReceivedMessage detached(ReceivedMessage m) {
        return memory.detached(m);
    }

    /** The loop whose engine owns the RPC a datagram is about (ours unless it names our client RPC). */
    private EngineLoop owner(ByteBuffer bytes) {
        return owner(bytes, bytes.position(), bytes.remaining());
    }

    /** The loop whose engine owns the RPC of the packet at {@code at} ({@code available} bytes there). */
    private EngineLoop owner(ByteBuffer bytes, int at, int available) {
        if (available < WireFormat.COMMON_HEADER) {
            return this;
        }
        long senderId = bytes.getLong(at + WireFormat.OFF_SENDER_ID);
        if (RpcIds.isClientId(senderId)) {
            return this; // about a request: a server RPC, kept by the loop that reads that peer
        }
        return siblings[RpcIds.shard(senderId, siblings.length)];
    }

    /** After a read round, or the datagrams the receive drain held: drain, if they or a tick need it. */
    private void onReadComplete() {
        if (readPending || tickOwed) {
            readPending = false;
            tickOwed = false;
            drain();
        }
    }

    private void onTimer() {
        long late = System.nanoTime() - timerDeadline;
        // How late the loop runs, recently (a decaying maximum): on a busy machine a datagram can
        // wait about as long in the socket before this loop reads it.
        lagNanos = Math.max(Math.max(0, late), lagNanos - lagNanos / 8);
        timer = null;
        timerDeadline = Long.MAX_VALUE;
        if (closed) {
            return;
        }
        checkGuarded("timer");
        if (receiveDrain.holding()) {
            // The held datagrams' task comes next; its drain ticks the engine (see drain), even
            // if they all went to sibling loops and none reached this engine.
            tickOwed = true;
            return;
        }
        if (waiter != null) {
            // A caller reads the sockets and may be descheduled with data waiting on them: read
            // it first, or the tick would take RPCs whose packets wait there for silent. (The
            // drain after that read leaves the timer to the drain below: no second timer task.)
            inTimer = true;
            try {
                readSockets(waiterSockets, null); // the others the loop's epoll instance watches
            } finally {
                inTimer = false;
            }
        }
        engine.onTimer(System.nanoTime());
        drain();
    }

    // ------------------------------------------------------------------ outputs

    /**
     * Drains the engine's events and datagrams until it has neither, flushes the writes, and
     * re-arms the timer. Re-entrant calls (an inline handler replying) only ask the running
     * drain to go round again.
     */
    void drain() {
        checkGuarded("drain");
        if (draining) {
            drainAgain = true;
            return;
        }
        if (closed) {
            return;
        }
        draining = true;
        try {
            readPending = false; // this drain serves everything received so far
            engine.endBatch(); // the grants the read round's data allows
            // Netty runs scheduled tasks only between batches of other work, so a busy loop may
            // run the timer late: serve a passed deadline here too (an early call is harmless).
            // Not while datagrams this round read wait in the receive drain: a loop that was
            // descheduled for a few ms would take the RPCs whose data they carry for silent and
            // ask for it again (docs/benchmarks.md, "What the incast's RESENDs were"); they reach the
            // engine in the round's last task, whose drain ticks it.
            long now = System.nanoTime();
            long deadline = engine.nextDeadline();
            // Nor while a caller reads the sockets: the timer task reads what waits there first.
            if (deadline != Long.MAX_VALUE && now - deadline >= 0 && !receiveDrain.holding() && waiter == null) {
                engine.onTimer(now);
            }
            do {
                drainAgain = false;
                EngineEvent e;
                while ((e = engine.pollEvent()) != null) {
                    dispatch(e);
                    engine.recycle(e); // dispatch kept nothing of it but its message
                }
                transmit();
            } while ((drainAgain || engine.hasEvents()) && !closed);
            if (!closed) {
                writer.flush();
                armTimer();
            }
        } finally {
            draining = false;
        }
    }

    private void dispatch(EngineEvent e) {
        switch (e.kind()) {
            case RESPONSE -> calls.onResponse(e);
            case FAILED -> calls.onFailed(e);
            case REQUEST -> requests.onRequest(e);
            case CANCELLED -> requests.onCancelled(e);
        }
    }

    private void transmit() {
        long now = System.nanoTime();
        while (writer.writable()) {
            Transmit t = engine.pollTransmit(now, writer.reserve());
            if (t == null) {
                return;
            }
            writer.send(t, t.source() != null ? ((UserPayload) t.source()).payloadBuffer() : null);
        }
    }

    /** How late this loop's timer has fired recently (ns, a decaying maximum). Loop only. */
    long recentLagNanos() {
        return lagNanos;
    }

    private void armTimer() {
        long deadline = engine.nextDeadline();
        tickDue = deadline;
        if (readerTicks || inTimer || deadline == Long.MAX_VALUE || deadline >= timerDeadline) {
            return; // a spinning reader ticks the engine meanwhile (see yieldToSpinningCaller)
        }
        cancelTimer();
        timerDeadline = deadline;
        long delay = Math.max(0, deadline - System.nanoTime());
        timer = loop.schedule(timerTask, delay, TimeUnit.NANOSECONDS);
    }

    /** Cancels the loop's timer for the engine, if armed (on the loop, under the lock). */
    private void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
        timerDeadline = Long.MAX_VALUE;
    }

    // ------------------------------------------------------------------ close and metrics

    /** Adds the close future of each of this loop's channels to {@code out} (any thread). */
    void closeFutures(List<io.netty.channel.ChannelFuture> out) {
        for (Channel ch : channels) {
            out.add(ch.closeFuture());
        }
    }

    /**
     * Fails every call with {@code why}, releases every buffer, cancels the timers and closes the
     * channels. On the loop (or in a caller's turn); idempotent.
     */
    void closeOnLoop() {
        locked(this::closeLocked);
    }

    private void closeLocked() {
        if (closed) {
            return;
        }
        closed = true;
        cancelTimer();
        deadlines.close();
        calls.close();
        commands.runAll(); // queued calls and replies: they see the socket closed and give up
        receiveDrain.close();
        requests.close();
        engine.close(); // received payloads not yet delivered, and the outgoing ones it still read
        if (writer != null) {
            writer.close();
        }
        if (reader != null) {
            reader.close();
        }
        if (waiterEpoll != null) {
            waiterEpoll.close(); // a waiter inside leaves (kicked) and closes it
        }
        WaiterEpoll look = spinEpoll;
        if (look != null) {
            spinEpoll = null;
            look.close(); // the loop inside it leaves and closes it
        }
        // A waiter's recvfrom outside the lock (spinRead) ends before its socket closes: a few
        // system calls' time, unless the waiter was descheduled in it (then yield the core to it).
        long start = System.nanoTime();
        while (waiterInRead) {
            if (System.nanoTime() - start < LOCK_SPIN_NANOS) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
        if (waiterReader != null) {
            waiterReader.close();
        }
        for (Channel ch : channels) {
            ch.close();
        }
    }

    /** A snapshot of this engine's live RPCs (on the loop), added to {@code out}; none once closed. */
    void rpcs(List<RpcState> out) {
        if (!closed) {
            engine.rpcs(System.nanoTime(), out);
        }
    }

    /** Adds this loop's counters to {@code m} (on the loop). */
    void addMetrics(MetricsSnapshot m) {
        for (Counter c : Counter.values()) {
            m.counters[c.ordinal()] += engine.counter(c);
        }
        for (DropReason r : DropReason.values()) {
            m.drops[r.ordinal()] += engine.drops(r);
        }
        for (int i = 0; i < shell.length; i++) {
            m.shell[i] += shell[i];
        }
        m.shell[ShellCounter.LOOP_HANDOFFS.ordinal()] += commands.handoffs();
        m.activeClientRpcs += engine.liveClientRpcs();
        m.activeServerRpcs += engine.liveServerRpcs();
        m.gauges[MetricsSnapshot.BUFFERED] += engine.bufferedBytes();
        m.gauges[MetricsSnapshot.OUTGOING] += engine.outgoingBytes();
        m.gauges[MetricsSnapshot.INCOMING] += engine.incomingBytes();
        m.gauges[MetricsSnapshot.PEERS] += engine.peers();
    }

    /** Reads datagrams of one channel into the engine; events end up in the loop's drain. */
    final class Inbound extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof DatagramPacket p) {
                lock();
                try {
                    if (opener != null && (p = opener.open(p)) == null) {
                        return; // refused and counted (the finally unlocks)
                    }
                    receiveDrain.offer(p);
                } finally {
                    engineLock.unlock();
                }
            } else {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            locked(readComplete);
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable()) {
                locked(drainTask);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            count(ShellCounter.IO_ERRORS);
            if (!closed) {
                log.debug("Homa socket {}: I/O error", ctx.channel().localAddress(), cause);
            }
        }
    }
}
