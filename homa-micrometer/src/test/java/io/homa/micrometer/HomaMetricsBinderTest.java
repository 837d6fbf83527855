package io.homa.micrometer;

import io.homa.HomaConfig;
import io.homa.HomaSocket;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The binder's meters under a real echo load on loopback. */
class HomaMetricsBinderTest {
    private HomaSocket server;
    private HomaSocket client;
    private InetSocketAddress serverAddress;

    @BeforeEach
    void open() {
        HomaConfig config = HomaConfig.builder().bindAddress(new InetSocketAddress("127.0.0.1", 0)).build();
        server = HomaSocket.open(config);
        client = HomaSocket.open(config);
        server.serve(r -> r.reply(r.toByteArray()));
        serverAddress = new InetSocketAddress("127.0.0.1", server.localAddress().getPort());
    }

    @AfterEach
    void close() {
        client.close();
        server.close();
    }

    /** 20 calls of 100 B and 5 of 100 KB. */
    private void echoLoad() throws Exception {
        for (int i = 0; i < 20; i++) {
            assertEquals(100, client.call(serverAddress, new byte[100]).get(30, TimeUnit.SECONDS).length);
        }
        for (int i = 0; i < 5; i++) {
            assertEquals(100_000, client.call(serverAddress, new byte[100_000]).get(30, TimeUnit.SECONDS).length);
        }
    }

    @Test
    void simpleRegistry_countsPacketsRpcsAndTimesCallsBySize() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (HomaMetricsBinder binder = new HomaMetricsBinder(client, Tags.empty(), Duration.ZERO)) {
            binder.bindTo(registry);
            echoLoad();
            FunctionCounter data = registry.get("homa.packets.sent").tag("type", "data").functionCounter();
            assertTrue(data.count() >= 25, "DATA packets sent: " + data.count());
            assertEquals(25, registry.get("homa.rpcs.completed").tag("role", "client").functionCounter().count());
            assertEquals(25, registry.get("homa.rpcs.started").tag("role", "client").functionCounter().count());
            assertEquals(25, registry.get("homa.shell.calls.succeeded").functionCounter().count());
            assertTrue(registry.get("homa.transmitted").functionCounter().count() > 25 * 100);
            assertEquals(0, registry.get("homa.packets.dropped").tag("reason", "bad_magic").functionCounter().count());

            Timer small = registry.get(HomaMetricsBinder.CLIENT_DURATION).tags("size", "le1KiB", "outcome", "success").timer();
            Timer medium = registry.get(HomaMetricsBinder.CLIENT_DURATION).tags("size", "le64KiB", "outcome", "success").timer();
            Timer large = registry.get(HomaMetricsBinder.CLIENT_DURATION).tags("size", "le1MiB", "outcome", "success").timer();
            assertEquals(20, small.count());
            assertEquals(0, medium.count());
            assertEquals(5, large.count());
            assertTrue(large.totalTime(TimeUnit.NANOSECONDS) > 0);

            Gauge peers = registry.get("homa.peers").gauge();
            assertTrue(peers.value() >= 1, "the client knows the server: " + peers.value());
            assertNotNull(registry.get("homa.rpcs.active").tag("role", "server").gauge());
        }
        // Closed: later calls are no longer timed.
        client.call(serverAddress, new byte[10]).get(30, TimeUnit.SECONDS);
        assertEquals(20, registry.get(HomaMetricsBinder.CLIENT_DURATION).tags("size", "le1KiB", "outcome", "success")
                .timer().count());
    }

    /** A secured server's requests by the verified identity of their client: a counter per identity, made as it appears. */
    @Test
    void securedServer_countsRequestsByPeerIdentity() throws Exception {
        io.homa.HomaKeyRing ring = io.homa.HomaKeyRing.of(io.homa.HomaKeyRing.Cipher.AES_GCM_128, new byte[32]);
        HomaConfig secured = HomaConfig.builder().bindAddress(new InetSocketAddress("127.0.0.1", 0))
                .security(io.homa.HomaSecurity.preSharedKeys(ring).peerName("tenant-a")).build();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (HomaSocket s = HomaSocket.open(secured); HomaSocket c = HomaSocket.open(secured);
             HomaMetricsBinder binder = new HomaMetricsBinder(s, Tags.empty(), Duration.ZERO)) {
            s.serve(r -> r.reply(r.toByteArray()));
            binder.bindTo(registry); // before any request: no identity yet
            assertTrue(registry.find("homa.requests.by.peer").functionCounters().isEmpty());
            InetSocketAddress to = new InetSocketAddress("127.0.0.1", s.localAddress().getPort());
            for (int i = 0; i < 7; i++) {
                c.call(to, new byte[10]).get(30, TimeUnit.SECONDS);
            }
            assertEquals(java.util.Map.of("tenant-a", 7L), s.metrics().requestsByPeerIdentity());
            registry.get("homa.rpcs.completed").tag("role", "server").functionCounter().count(); // a scrape finds it
            assertEquals(7, registry.get("homa.requests.by.peer").tag("peer.identity", "tenant-a").functionCounter().count());
            assertTrue(client.metrics().requestsByPeerIdentity().isEmpty(), "a plain socket counts none");
        }
    }

    @Test
    void prometheusScrape_carriesNonZeroCountersAndLatencyHistograms() throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        // Fresh snapshots: a scrape right after the load must see all of it.
        try (HomaMetricsBinder clientBinder = new HomaMetricsBinder(client, Tags.of("side", "client"), Duration.ZERO);
             HomaMetricsBinder serverBinder = new HomaMetricsBinder(server, Tags.of("side", "server"), Duration.ZERO)) {
            clientBinder.bindTo(registry);
            serverBinder.bindTo(registry);
            echoLoad();
            String scrape = registry.scrape();
            assertPositive(scrape, "homa_packets_sent_total\\{side=\"client\",type=\"data\"\\}");
            assertPositive(scrape, "homa_packets_received_total\\{side=\"server\",type=\"data\"\\}");
            assertPositive(scrape, "homa_rpcs_completed_total\\{role=\"client\",side=\"client\"\\}");
            assertPositive(scrape, "homa_rpcs_started_total\\{role=\"server\",side=\"server\"\\}");
            assertPositive(scrape, "homa_transmitted_bytes_total\\{side=\"server\"\\}");
            assertPositive(scrape, "homa_rpc_client_duration_seconds_count\\{outcome=\"success\",side=\"client\",size=\"le1KiB\"\\}");
            // A bucket (le label) of the 1 MiB class with calls in it.
            assertTrue(Pattern.compile("(?m)^homa_rpc_client_duration_seconds_bucket\\{(?=[^}]*le=\")(?=[^}]*size=\"le1MiB\")[^}]*\\} [1-9]")
                    .matcher(scrape).find(), "a latency histogram with counts:\n" + scrape);
            assertTrue(scrape.contains("homa_packets_dropped_total{reason=\"bad_magic\",side=\"client\"}"), scrape);
            assertTrue(scrape.contains("homa_buffered_bytes{side=\"server\"}"), scrape);
        }
    }

    /** The sample of the series matching {@code series} is there and above zero. */
    private static void assertPositive(String scrape, String series) {
        Matcher m = Pattern.compile("(?m)^" + series + " (\\S+)$").matcher(scrape);
        assertTrue(m.find(), "no sample for " + series + " in:\n" + scrape);
        assertTrue(Double.parseDouble(m.group(1)) > 0, series + " is " + m.group(1));
    }

    @Test
    void sizeClasses() {
        assertEquals(0, HomaMetricsBinder.sizeClass(0));
        assertEquals(0, HomaMetricsBinder.sizeClass(1024));
        assertEquals(1, HomaMetricsBinder.sizeClass(1025));
        assertEquals(2, HomaMetricsBinder.sizeClass(1 << 20));
        assertEquals(3, HomaMetricsBinder.sizeClass((1 << 20) + 1));
    }
}
