package io.homa.bench;

import io.homa.HomaConfig;
import io.homa.HomaJmx;
import io.homa.HomaSocket;
import org.junit.jupiter.api.Test;

import javax.management.ObjectName;
import javax.management.remote.JMXConnectorServer;
import javax.management.remote.JMXConnectorServerFactory;
import javax.management.remote.JMXServiceURL;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code stat} against live sockets of this JVM, through a real JMX connector (RMI on loopback)
 * to the platform MBean server, as it would reach another process.
 */
class StatCommandTest {
    @Test
    void printsRatesAndWarnsOfDrops_overJmx() throws Exception {
        HomaConfig config = HomaConfig.builder().bindAddress(new InetSocketAddress("127.0.0.1", 0)).build();
        JMXConnectorServer jmx = JMXConnectorServerFactory.newJMXConnectorServer(
                new JMXServiceURL("service:jmx:rmi://127.0.0.1"), null, ManagementFactory.getPlatformMBeanServer());
        jmx.start();
        AtomicBoolean running = new AtomicBoolean(true);
        Thread load = null;
        try (HomaSocket server = HomaSocket.open(config); HomaSocket client = HomaSocket.open(config)) {
            server.serve(r -> r.reply(r.toByteArray()));
            ObjectName name = HomaJmx.register(server, "stat-test-server");
            InetSocketAddress to = new InetSocketAddress("127.0.0.1", server.localAddress().getPort());
            try (DatagramSocket junk = new DatagramSocket()) {
                load = new Thread(() -> {
                    while (running.get()) {
                        try {
                            client.call(to, new byte[500]).get(30, TimeUnit.SECONDS);
                            // Not Homa: counted as BAD_MAGIC, which stat must flag.
                            byte[] garbage = "not homa, just junk bytes here".getBytes(StandardCharsets.US_ASCII);
                            junk.send(new DatagramPacket(garbage, garbage.length, to));
                        } catch (Exception e) {
                            if (running.get()) {
                                throw new IllegalStateException(e);
                            }
                        }
                    }
                }, "stat-test-load");
                load.start();
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                ByteArrayOutputStream err = new ByteArrayOutputStream();
                int code = StatCommand.execute(new String[] {"--url", jmx.getAddress().toString(),
                                "--interval", "300ms", "--count", "2"},
                        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
                String text = out.toString(StandardCharsets.UTF_8);
                System.out.print(text); // a real sample, for the log
                assertEquals(0, code, text + err.toString(StandardCharsets.UTF_8));
                assertEquals(2, text.split("== stat-test-server").length - 1, text);
                Matcher m = Pattern.compile("server started (\\S+)/s completed (\\S+)/s").matcher(text);
                assertTrue(m.find(), text);
                assertNotEquals(0.0, Double.parseDouble(m.group(1)), "requests served per second:\n" + text);
                assertTrue(text.contains("dropped BAD_MAGIC"), text);
                assertTrue(Pattern.compile("packets/s  sent: DATA [1-9]").matcher(text).find(), text);
            } finally {
                running.set(false);
                if (load != null) {
                    load.join(Duration.ofSeconds(30).toMillis());
                }
                HomaJmx.unregister(name);
            }
        } finally {
            jmx.stop();
        }
    }

    @Test
    void noSocketRegistered_saysHowToRegister() throws Exception {
        JMXConnectorServer jmx = JMXConnectorServerFactory.newJMXConnectorServer(
                new JMXServiceURL("service:jmx:rmi://127.0.0.1"), null, ManagementFactory.getPlatformMBeanServer());
        jmx.start();
        try {
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int code = StatCommand.execute(new String[] {"--url", jmx.getAddress().toString(), "--name", "nobody",
                    "--count", "1"}, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8));
            assertNotEquals(0, code);
            assertTrue(err.toString(StandardCharsets.UTF_8).contains("HomaJmx.register"), err.toString(StandardCharsets.UTF_8));
        } finally {
            jmx.stop();
        }
    }

    @Test
    void durations() {
        assertEquals(Duration.ofMillis(500), StatCommand.parseDuration("500ms"));
        assertEquals(Duration.ofSeconds(2), StatCommand.parseDuration("2s"));
        assertEquals(Duration.ofMinutes(1), StatCommand.parseDuration("1m"));
        assertEquals(Duration.ofMillis(1500), StatCommand.parseDuration("1.5"));
    }
}
