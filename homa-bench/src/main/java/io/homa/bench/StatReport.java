package io.homa.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One interval of {@code stat}: the rates between two samples of a socket's MBean attributes and
 * the warnings they call for (Linux Homa's metrics.py calls them canaries).
 */
final class StatReport {
    private static final String[] TYPES = {"DATA", "GRANT", "RESEND", "RPC_UNKNOWN", "BUSY", "CUTOFFS", "NEED_ACK", "ACK"};
    /** RESENDs above this share of the DATA packets are worth a look (loss on a datacenter path is rare). */
    private static final double RESEND_SHARE = 0.01;
    /** BUSY packets per second above this, and above a tenth of the RPCs, make a storm. */
    private static final double BUSY_PER_SECOND = 10;

    /** Counters whose growth is a problem by itself, with what it suggests. */
    private static final String[][] TROUBLE = {
            {"TIMEOUTS", "client RPCs timed out: a server gone, unreachable or overloaded"},
            {"SERVER_RPCS_TIMED_OUT", "server RPCs freed without an ACK: clients vanished"},
            {"REQUEST_RESTARTS", "requests restarted after RPC_UNKNOWN: a server restarted, evicted or dropped them"},
            {"SERVER_RPCS_ABANDONED", "server RPCs abandoned (the client said RPC_UNKNOWN, or the handler gave up)"},
            {"MEMORY_EVICTIONS", "incoming requests evicted for memory (maxBufferedBytes too small for the load)"},
            {"RPC_LIMIT_REFUSALS", "calls refused: maxRpcs live RPCs"},
            {"OUTGOING_LIMIT_REFUSALS", "sends refused: maxOutgoingBytes held"},
            {"LOST_GRANTS_RECOVERED", "GRANT packets lost and recovered"},
            {"IO_ERRORS", "socket I/O errors (see the process log)"},
            {"CALLS_DEADLINE_EXPIRED", "calls failed by their deadline"},
            {"CALLS_OVERLOADED", "calls refused by an overloaded server (its handler queue was full or too slow)"},
            {"REQUESTS_OVERLOADED", "requests refused: the handlers are too far behind (maxQueuedRequests)"},
            {"REQUESTS_SHED", "requests refused under overload: they waited past the queue's target (handlers too slow for the load)"},
            {"REQUESTS_EXPIRED", "requests refused unrun: their deadline passed while they waited"},
            {"REQUESTS_CANCELLED", "requests whose caller gave up (CANCEL) before the reply"},
            {"REQUESTS_DROPPED", "requests dropped: the handler threw, never replied in time, or none was set"},
            {"REQUESTS_SKIPPED", "requests whose handler never ran: their timeout passed in the queue (slow handlers)"},
            {"DATAGRAMS_DROPPED", "datagrams the shell dropped (stray overload notices, processing failures)"},
            {"SECURITY_NOT_SEALED", "secured socket: plaintext datagrams refused (a peer without the layer)"},
            {"SECURITY_UNKNOWN_KEY", "secured socket: datagrams under a master key not held (retired, or another cluster's)"},
            {"SECURITY_AUTH_FAILED", "secured socket: datagrams that failed authentication (wrong key or tampered)"},
            {"SECURITY_REPLAY", "secured socket: replayed datagrams refused (or reordered beyond the 4,096-packet window)"},
            {"SECURITY_BAD_HEADER", "secured socket: sealed datagrams with a bad PSP header"},
            {"SECURITY_WRONG_PEER", "mutual TLS: datagrams under an SPI issued to another peer address"},
            {"SECURITY_NO_SEND_KEY", "mutual TLS: datagrams not sent, no keys for the peer (its exchange ended)"},
            {"TLS_REFUSED", "mutual TLS: connections refused (untrusted or no certificate, plaintext, no ALPN, bad frame)"},
            {"TLS_ACCEPTS_PAUSED", "mutual TLS: listener paused at 64 handshakes under way (a flood? 16 per address at most)"},
            {"TIMER_PACKETS_DEFERRED", "RESEND/NEED_ACK/BUSY put off: the timer's share of the link was spent"},
    };

    private StatReport() {
    }

    /** The report of one interval of {@code seconds} between samples {@code a} and {@code b} of socket {@code name}. */
    static String render(String name, Map<String, Long> a, Map<String, Long> b, double seconds) {
        Rates r = new Rates(a, b, seconds);
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "== %s: %.2f s ==%n", name, seconds));
        sb.append(String.format(Locale.ROOT, "calls      started %s/s  succeeded %s/s  failed %s/s%n",
                r.rate("CALLS_STARTED"), r.rate("CALLS_SUCCEEDED"), r.rate("CALLS_FAILED")));
        sb.append(String.format(Locale.ROOT, "requests   handled %s/s  replied %s/s  shed %s/s  expired %s/s  cancelled %s/s"
                        + "  | queued %d, waited p50 %d us p99 %d us (since start)%n",
                r.rate("REQUESTS_HANDLED"), r.rate("REQUESTS_REPLIED"), r.rate("REQUESTS_SHED"),
                r.rate("REQUESTS_EXPIRED"), r.rate("REQUESTS_CANCELLED"), r.now("QueuedRequests"),
                r.now("QueueDelayP50Micros"), r.now("QueueDelayP99Micros")));
        sb.append(String.format(Locale.ROOT, "rpcs       client started %s/s completed %s/s failed %s/s | server started %s/s completed %s/s%n",
                r.rate("CLIENT_RPCS_STARTED"), r.rate("CLIENT_RPCS_COMPLETED"), r.rate("CLIENT_RPCS_FAILED"),
                r.rate("SERVER_RPCS_STARTED"), r.rate("SERVER_RPCS_COMPLETED")));
        sb.append(String.format(Locale.ROOT, "bytes      sent %s/s  received %s/s  retransmitted %s/s%n",
                bytes(r.perSecond("BYTES_SENT")), bytes(r.perSecond("BYTES_RECEIVED")),
                bytes(r.perSecond("BYTES_RETRANSMITTED"))));
        sb.append("packets/s  sent:");
        for (String t : TYPES) {
            sb.append(' ').append(t).append(' ').append(r.rate("PACKETS_SENT_" + t));
        }
        sb.append(String.format("%n           received:"));
        for (String t : TYPES) {
            sb.append(' ').append(t).append(' ').append(r.rate("PACKETS_RECEIVED_" + t));
        }
        sb.append(String.format(Locale.ROOT, "%nlive       client rpcs %d  server rpcs %d  peers %d  buffered %s  outgoing %s  granted-unreceived %s%n",
                r.now("ActiveClientRpcs"), r.now("ActiveServerRpcs"), r.now("Peers"), bytes(r.now("BufferedBytes")),
                bytes(r.now("OutgoingBytes")), bytes(r.now("IncomingBytes"))));
        List<String> warnings = warnings(r);
        sb.append(warnings.isEmpty() ? String.format("warnings   none%n") : String.format("warnings%n"));
        for (String w : warnings) {
            sb.append("  ! ").append(w).append(String.format("%n"));
        }
        return sb.toString();
    }

    private static List<String> warnings(Rates r) {
        List<String> w = new ArrayList<>();
        long data = r.delta("PACKETS_SENT_DATA") + r.delta("PACKETS_RECEIVED_DATA");
        long resendsSent = r.delta("PACKETS_SENT_RESEND");
        long resendsReceived = r.delta("PACKETS_RECEIVED_RESEND");
        if (resendsSent + resendsReceived > Math.max(0, RESEND_SHARE * data)) {
            w.add(String.format(Locale.ROOT, "many RESENDs: %s/s sent (we miss data), %s/s received (peers miss ours),"
                            + " %s DATA packets/s retransmitted: packet loss, or peers too slow to answer",
                    r.rate("PACKETS_SENT_RESEND"), r.rate("PACKETS_RECEIVED_RESEND"), r.rate("PACKETS_RETRANSMITTED")));
        }
        long busy = r.delta("PACKETS_SENT_BUSY") + r.delta("PACKETS_RECEIVED_BUSY");
        long rpcs = r.delta("CLIENT_RPCS_COMPLETED") + r.delta("SERVER_RPCS_COMPLETED");
        if (busy / r.seconds > BUSY_PER_SECOND && busy > rpcs / 10) {
            w.add(String.format(Locale.ROOT, "BUSY storm: %s/s sent, %s/s received: RPCs kept alive while they wait"
                            + " (senders starved of grants, or slow servers)",
                    r.rate("PACKETS_SENT_BUSY"), r.rate("PACKETS_RECEIVED_BUSY")));
        }
        long starved = r.now("RpcsWaitingForGrants");
        if (starved > 0) {
            w.add(starved + " RPC(s) starved of grants (sent all they were granted, over 10 ms old):"
                    + " a receiver's incoming budget is taken by others, or its GRANTs are lost");
        }
        for (Map.Entry<String, Long> e : r.b.entrySet()) {
            if (e.getKey().startsWith("DROPS_") && r.delta(e.getKey()) > 0) {
                w.add(String.format(Locale.ROOT, "dropped %s: %s/s", e.getKey().substring("DROPS_".length()),
                        r.rate(e.getKey())));
            }
        }
        for (String[] t : TROUBLE) {
            if (r.delta(t[0]) > 0) {
                w.add(String.format(Locale.ROOT, "%s %s/s: %s", t[0], r.rate(t[0]), t[1]));
            }
        }
        return w;
    }

    /** "1.2 MB", "340 B". */
    static String bytes(double n) {
        String[] units = {"B", "KB", "MB", "GB", "TB"};
        int u = 0;
        while (Math.abs(n) >= 1000 && u < units.length - 1) {
            n /= 1000;
            u++;
        }
        return u == 0 ? String.format(Locale.ROOT, "%.0f %s", n, units[u]) : String.format(Locale.ROOT, "%.1f %s", n, units[u]);
    }

    /** Differences between two samples. */
    private static final class Rates {
        final Map<String, Long> a;
        final Map<String, Long> b;
        final double seconds;

        Rates(Map<String, Long> a, Map<String, Long> b, double seconds) {
            this.a = a;
            this.b = b;
            this.seconds = seconds;
        }

        long delta(String k) {
            return b.getOrDefault(k, 0L) - a.getOrDefault(k, 0L);
        }

        double perSecond(String k) {
            return delta(k) / seconds;
        }

        String rate(String k) {
            double v = perSecond(k);
            return v >= 100 || v == Math.rint(v) ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.1f", v);
        }

        long now(String k) {
            return b.getOrDefault(k, 0L);
        }
    }
}
