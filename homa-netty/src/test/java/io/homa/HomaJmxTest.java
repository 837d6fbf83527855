package io.homa;

import org.junit.jupiter.api.Test;

import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A socket's MBean, read through the platform MBean server as JConsole or a JMX client would. */
@org.junit.jupiter.api.extension.ExtendWith(LeakCheck.class)
class HomaJmxTest {
    @Test
    void registeredSocket_showsCountersGaugesAndLiveRpcs() throws Exception {
        MBeanServer mbeans = ManagementFactory.getPlatformMBeanServer();
        try (HomaSocket server = HomaSocket.open(Loopback.config().build());
             HomaSocket client = HomaSocket.open(Loopback.config().build())) {
            server.serve(r -> r.reply(r.toByteArray()));
            ObjectName name = HomaJmx.register(client, "jmx-test-client");
            try {
                assertEquals("io.homa", name.getDomain());
                assertEquals("HomaSocket", name.getKeyProperty("type"));
                assertEquals("jmx-test-client", ObjectName.unquote(name.getKeyProperty("name")));
                assertTrue(mbeans.isRegistered(name));
                assertEquals(0L, mbeans.getAttribute(name, "PACKETS_SENT_DATA"));
                for (int i = 0; i < 3; i++) {
                    client.call(Loopback.addressOf(server), new byte[2000]).get(30, TimeUnit.SECONDS);
                }
                assertTrue((Long) mbeans.getAttribute(name, "PACKETS_SENT_DATA") >= 3);
                assertEquals(3L, mbeans.getAttribute(name, "CLIENT_RPCS_COMPLETED"));
                assertEquals(3L, mbeans.getAttribute(name, "CALLS_SUCCEEDED"));
                assertEquals(0L, mbeans.getAttribute(name, "DROPS_BAD_MAGIC"));
                assertTrue((Long) mbeans.getAttribute(name, "Peers") >= 1);
                assertEquals(client.metrics().transport(), mbeans.getAttribute(name, "Transport"));

                AttributeList some = mbeans.getAttributes(name, new String[] {"TIMEOUTS", "ActiveClientRpcs", "nonsense"});
                assertEquals(2, some.size(), "unknown attributes are left out");
                assertEquals(0L, ((Attribute) some.get(0)).getValue());

                String[] rpcs = (String[]) mbeans.getAttribute(name, "Rpcs");
                assertEquals(0, rpcs.length, "no call in flight");
                assertTrue(mbeans.getMBeanInfo(name).getAttributes().length > 40);
                assertThrows(HomaBadArgumentException.class, () -> HomaJmx.register(client, "jmx-test-client"));
            } finally {
                HomaJmx.unregister(name);
            }
            assertFalse(mbeans.isRegistered(name));
            HomaJmx.unregister(name); // twice is harmless
        }
    }

    @Test
    void badArguments() {
        assertThrows(HomaBadArgumentException.class, () -> HomaJmx.register(null, "x"));
    }
}
