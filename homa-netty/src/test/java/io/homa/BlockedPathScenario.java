package io.homa;

import io.homa.HomaMetrics.Shell;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The process {@link BlockedPathTest} runs inside its network namespace: a server and a client,
 * both with the TCP fallback, on the namespace's loopback, driven by commands on stdin, one
 * answer line on stdout per command ({@code key=value} pairs):
 * <ul>
 *   <li>at start: {@code port=<the server's port>}</li>
 *   <li>{@code CALL n}: n calls (the first alone, timed, then n-1 at once), each checked</li>
 *   <li>{@code AWAIT_HOMA}: waits until the client has no peer on TCP (its fallback period over)</li>
 *   <li>{@code QUIT}</li>
 * </ul>
 * Every answer carries the client's path counters and how often the handler ran.
 */
final class BlockedPathScenario {
    static final Duration PROBE = Duration.ofMillis(300);
    /**
     * Calls made before the test starts: a cold JVM's first calls can take longer than the probe
     * interval (such a call's retry is refused: the server has the request).
     */
    static final int WARM_UP = 200;
    /** Longer than the blocked phase takes, so that its calls go over TCP directly; short enough to wait for. */
    static final Duration PERIOD = Duration.ofSeconds(2);

    private BlockedPathScenario() {
    }

    public static void main(String[] args) throws Exception {
        CountingEcho echo = new CountingEcho();
        InetSocketAddress bind = new InetSocketAddress("127.0.0.1", 0);
        HomaConfig.Builder config = HomaConfig.builder().bindAddress(bind).tcpFallback(true).probeInterval(PROBE)
                .fallbackPeriod(PERIOD);
        try (HomaSocket server = HomaSocket.open(config.build()); HomaSocket client = HomaSocket.open(config.build())) {
            server.serve(echo);
            InetSocketAddress to = new InetSocketAddress("127.0.0.1", server.localAddress().getPort());
            for (int i = 0; i < WARM_UP; i++) {
                client.call(to, CountingEcho.request(-1 - i, 100 + i * 100)).get(30, TimeUnit.SECONDS);
            }
            // And the fallback path once, against a server without Homa: what is measured later is a
            // retry, not the loading of the TCP classes.
            try (HomaSocket homaless = HomaSocket.open(config.build())) {
                homaless.serve(r -> r.reply(r.toByteArray()));
                Loopback.shellOf(homaless).closeUdpForTests();
                client.call(new InetSocketAddress("127.0.0.1", homaless.localAddress().getPort()), new byte[100])
                        .get(30, TimeUnit.SECONDS);
            }
            System.out.println("port=" + to.getPort() + " tcpCalls=" + client.metrics().shell(Shell.TCP_CALLS));
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            long token = 0;
            String line;
            while ((line = in.readLine()) != null) {
                String[] cmd = line.trim().split(" ");
                String result;
                switch (cmd[0]) {
                    case "CALL" -> {
                        int n = Integer.parseInt(cmd[1]);
                        long start = System.nanoTime();
                        boolean ok = check(client.call(to, CountingEcho.request(token, 1_000)), token);
                        long firstMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                        List<CompletableFuture<byte[]>> calls = new ArrayList<>();
                        for (int i = 1; i < n; i++) {
                            calls.add(client.call(to, CountingEcho.request(token + i, 1_000 + i * 1_000)));
                        }
                        for (int i = 1; i < n; i++) {
                            ok &= check(calls.get(i - 1), token + i);
                        }
                        token += n;
                        result = "ok=" + ok + " firstMillis=" + firstMillis;
                    }
                    case "AWAIT_HOMA" -> {
                        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                        while (client.metrics().shell(Shell.PEERS_ON_TCP) != 0 && System.nanoTime() < giveUp) {
                            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10)); // polls the gauge
                        }
                        result = "ok=" + (client.metrics().shell(Shell.PEERS_ON_TCP) == 0);
                    }
                    case "QUIT" -> {
                        return;
                    }
                    default -> result = "ok=false unknown=" + Arrays.toString(cmd);
                }
                HomaMetrics m = client.metrics();
                System.out.println(result + " fallbacks=" + m.shell(Shell.FALLBACKS)
                        + " refused=" + m.shell(Shell.FALLBACKS_REFUSED) + " tcpCalls=" + m.shell(Shell.TCP_CALLS)
                        + " homaCalls=" + m.shell(Shell.CALLS_STARTED) + " probes=" + m.shell(Shell.PROBES)
                        + " peersOnTcp=" + m.shell(Shell.PEERS_ON_TCP) + " runs=" + echo.total()
                        + " distinct=" + echo.distinct());
                System.out.flush();
            }
        }
    }

    private static boolean check(CompletableFuture<byte[]> call, long token) {
        try {
            return Arrays.equals(CountingEcho.request(token, call.get(30, TimeUnit.SECONDS).length), call.join());
        } catch (Exception e) {
            System.err.println("call " + token + " failed: " + e);
            return false;
        }
    }
}
