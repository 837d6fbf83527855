package io.homa;

import org.slf4j.LoggerFactory;

import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.InstanceAlreadyExistsException;
import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.MBeanOperationInfo;
import javax.management.MBeanServer;
import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * Publishes a socket's counters and live RPCs as one MBean on the platform MBean server, for
 * JConsole, {@code jmxterm}, Prometheus' JMX exporter and {@code homa-bench stat}. Nothing is
 * registered unless asked.
 *
 * <pre>{@code
 * ObjectName name = HomaJmx.register(socket, "orders");   // io.homa:type=HomaSocket,name=orders
 * ...
 * HomaJmx.unregister(name);                              // before or after closing the socket
 * }</pre>
 *
 * <p>Attributes (all read-only {@code long}s unless said): every protocol counter by its name
 * ({@code PACKETS_SENT_DATA}, {@code TIMEOUTS}, ..., see {@link HomaMetrics#counters()}), every
 * shell counter by its name ({@code CALLS_STARTED}, ..., see {@link HomaMetrics.Shell}), every drop
 * reason as {@code DROPS_<REASON>}, the gauges {@code ActiveClientRpcs}, {@code ActiveServerRpcs},
 * {@code BufferedBytes}, {@code OutgoingBytes}, {@code IncomingBytes}, {@code Peers},
 * {@code RpcsWaitingForGrants} (live RPCs over 10 ms old whose outgoing message sent all it was
 * granted) and {@code Rpcs} (a {@code String[]}, one line per live RPC, from
 * {@link HomaSocket#rpcs()}) and {@code Transport} (a {@code String}: {@code io_uring}, {@code epoll}
 * or {@code nio}).
 *
 * <p><b>Threads and cost.</b> Any thread. Reading attributes takes a fresh
 * {@link HomaSocket#metrics()} snapshot per request (one hand-off to each event loop; a
 * {@code getAttributes} call for many attributes takes one snapshot), {@code Rpcs} a
 * {@link HomaSocket#rpcs()} snapshot. After the socket closes, the last values stay readable.
 */
public final class HomaJmx {
    /** The domain of every Homa MBean. */
    public static final String DOMAIN = "io.homa";
    /**
     * The system property that registers every socket when it opens (and unregisters it when it
     * closes) under the name {@code <port>-<n>}: {@code -Dio.homa.jmx=true}.
     */
    public static final String AUTO_REGISTER_PROPERTY = "io.homa.jmx";
    /** What {@code RpcsWaitingForGrants} counts: RPCs at least this old (the JFR event's default too). */
    private static final Duration GRANT_WAIT = Duration.ofMillis(10);

    private HomaJmx() {
    }

    /**
     * Registers {@code socket}'s MBean as {@code io.homa:type=HomaSocket,name=<name>} on the
     * platform MBean server.
     *
     * @return the MBean's name, for {@link #unregister}
     * @throws HomaBadArgumentException if an argument is null, the name is not valid in an
     *         ObjectName value, or an MBean of that name exists already
     */
    public static ObjectName register(HomaSocket socket, String name) {
        if (socket == null || name == null) {
            throw new HomaBadArgumentException("socket and name must not be null");
        }
        ObjectName objectName;
        try {
            objectName = new ObjectName(DOMAIN + ":type=HomaSocket,name=" + ObjectName.quote(name));
        } catch (MalformedObjectNameException e) {
            throw new HomaBadArgumentException("\"" + name + "\" cannot name an MBean: " + e.getMessage());
        }
        try {
            ManagementFactory.getPlatformMBeanServer().registerMBean(new SocketMBean(socket), objectName);
        } catch (InstanceAlreadyExistsException e) {
            throw new HomaBadArgumentException("an MBean named " + objectName + " is registered already");
        } catch (JMException e) {
            throw new IllegalStateException("cannot register " + objectName, e);
        }
        return objectName;
    }

    /**
     * Registers {@code socket} as {@code <port>-<serial>} if {@link #AUTO_REGISTER_PROPERTY} is
     * true; the name, or null. Never throws: a socket works without its MBean.
     */
    static ObjectName autoRegister(HomaSocket socket, int serial) {
        if (!Boolean.getBoolean(AUTO_REGISTER_PROPERTY)) {
            return null;
        }
        try {
            return register(socket, socket.localAddress().getPort() + "-" + serial);
        } catch (RuntimeException e) {
            LoggerFactory.getLogger(HomaJmx.class).warn("cannot register {} with JMX", socket, e);
            return null;
        }
    }

    /**
     * Removes an MBean registered by {@link #register}; nothing if it is not registered.
     *
     * @throws HomaBadArgumentException if {@code name} is null
     */
    public static void unregister(ObjectName name) {
        if (name == null) {
            throw new HomaBadArgumentException("name must not be null");
        }
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        try {
            server.unregisterMBean(name);
        } catch (InstanceNotFoundException e) {
            // gone already
        } catch (JMException e) {
            throw new IllegalStateException("cannot unregister " + name, e);
        }
    }

    /** The MBean: attributes computed from one metrics snapshot per request. */
    private static final class SocketMBean implements DynamicMBean {
        private static final String RPCS = "Rpcs";
        private static final String WAITING = "RpcsWaitingForGrants";
        private static final String TRANSPORT = "Transport";
        private final HomaSocket socket;
        private final Map<String, ToLongFunction<HomaMetrics>> longs = new LinkedHashMap<>();
        private final MBeanInfo info;

        SocketMBean(HomaSocket socket) {
            this.socket = socket;
            for (String c : HomaMetrics.counterNames()) {
                longs.put(c, m -> m.counter(c));
            }
            for (HomaMetrics.Shell c : HomaMetrics.Shell.values()) {
                longs.put(c.name(), m -> m.shell(c));
            }
            for (String r : HomaMetrics.dropReasons()) {
                longs.put("DROPS_" + r, m -> m.drops(r));
            }
            longs.put("ActiveClientRpcs", HomaMetrics::activeClientRpcs);
            longs.put("ActiveServerRpcs", HomaMetrics::activeServerRpcs);
            longs.put("BufferedBytes", HomaMetrics::bufferedBytes);
            longs.put("OutgoingBytes", HomaMetrics::outgoingBytes);
            longs.put("IncomingBytes", HomaMetrics::incomingBytes);
            longs.put("Peers", HomaMetrics::peers);
            longs.put("QueuedRequests", HomaMetrics::queuedRequests);
            longs.put("QueueDelayP50Micros", m -> m.queueDelayMicros(0.5));
            longs.put("QueueDelayP99Micros", m -> m.queueDelayMicros(0.99));
            List<MBeanAttributeInfo> attributes = new ArrayList<>();
            for (String a : longs.keySet()) {
                attributes.add(new MBeanAttributeInfo(a, "long", a, true, false, false));
            }
            attributes.add(new MBeanAttributeInfo(RPCS, String[].class.getName(),
                    "The live RPCs, one line each", true, false, false));
            attributes.add(new MBeanAttributeInfo(WAITING, "long",
                    "Live RPCs over " + GRANT_WAIT.toMillis() + " ms old whose outgoing message sent all it was granted",
                    true, false, false));
            attributes.add(new MBeanAttributeInfo(TRANSPORT, String.class.getName(),
                    "The Netty transport the socket runs on: io_uring, epoll or nio", true, false, false));
            info = new MBeanInfo(SocketMBean.class.getName(), "A Homa socket: " + socket,
                    attributes.toArray(new MBeanAttributeInfo[0]), null, new MBeanOperationInfo[0], null);
        }

        /** The value of {@link #RPCS}, {@link #WAITING} or {@link #TRANSPORT}, or null for another attribute. */
        private Object fromRpcs(String attribute) {
            if (TRANSPORT.equals(attribute)) {
                return socket.metrics().transport();
            }
            if (RPCS.equals(attribute)) {
                return socket.rpcs().stream().map(RpcInfo::toString).toArray(String[]::new);
            }
            if (WAITING.equals(attribute)) {
                return socket.rpcs().stream()
                        .filter(r -> r.waitingForGrants() && r.age().compareTo(GRANT_WAIT) >= 0).count();
            }
            return null;
        }

        @Override
        public Object getAttribute(String attribute) throws AttributeNotFoundException {
            Object v = fromRpcs(attribute);
            if (v != null) {
                return v;
            }
            ToLongFunction<HomaMetrics> f = longs.get(attribute);
            if (f == null) {
                throw new AttributeNotFoundException("no attribute " + attribute);
            }
            return f.applyAsLong(socket.metrics());
        }

        @Override
        public AttributeList getAttributes(String[] attributes) {
            AttributeList list = new AttributeList();
            HomaMetrics m = null;
            for (String a : attributes) {
                ToLongFunction<HomaMetrics> f = longs.get(a);
                if (f != null) {
                    if (m == null) {
                        m = socket.metrics();
                    }
                    list.add(new Attribute(a, f.applyAsLong(m)));
                } else {
                    Object v = fromRpcs(a);
                    if (v != null) {
                        list.add(new Attribute(a, v));
                    }
                }
            }
            return list;
        }

        @Override
        public void setAttribute(Attribute attribute) throws AttributeNotFoundException {
            throw new AttributeNotFoundException(attribute.getName() + " is read-only");
        }

        @Override
        public AttributeList setAttributes(AttributeList attributes) {
            return new AttributeList();
        }

        @Override
        public Object invoke(String actionName, Object[] params, String[] signature) {
            throw new UnsupportedOperationException("a Homa socket's MBean has no operations");
        }

        @Override
        public MBeanInfo getMBeanInfo() {
            return info;
        }
    }
}
