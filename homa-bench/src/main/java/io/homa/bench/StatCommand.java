package io.homa.bench;

import com.sun.tools.attach.VirtualMachine;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import javax.management.Attribute;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * {@code stat}: samples the Homa sockets of a running JVM through JMX (their {@code HomaJmx} MBeans)
 * and prints rates per interval with warnings, in the spirit of Linux Homa's {@code metrics.py}
 * and its "canaries". docs/observability.md explains every line.
 */
@Command(name = "stat", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Samples the Homa sockets of a running JVM through JMX and prints rates and warnings.",
                "The process must register its sockets: HomaJmx.register(socket, name), or run with -Dio.homa.jmx=true."})
public final class StatCommand implements Callable<Integer> {
    static final class Target {
        @Option(names = "--pid", paramLabel = "PID", description = "A local JVM, through the attach API (same user).")
        Long pid;

        @Option(names = "--jmx", paramLabel = "HOST:PORT",
                description = "A JVM started with -Dcom.sun.management.jmxremote.port=PORT.")
        String hostPort;

        @Option(names = "--url", paramLabel = "URL", description = "A JMX service URL (service:jmx:...).")
        String url;
    }

    @ArgGroup(exclusive = true, multiplicity = "1")
    Target target;

    @Option(names = "--interval", paramLabel = "DURATION", defaultValue = "1s",
            description = "Time between samples: 500ms, 1s, 1m (default ${DEFAULT-VALUE}).")
    String interval;

    @Option(names = "--count", paramLabel = "N", defaultValue = "0",
            description = "Intervals to print, then stop (0: until interrupted).")
    int count;

    @Option(names = "--name", paramLabel = "NAME", description = "Only the socket registered under this name.")
    String name;

    private final PrintStream out;
    private final PrintStream err;

    private StatCommand(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    public static int execute(String[] args) {
        return execute(args, System.out, System.err);
    }

    public static int execute(String[] args, PrintStream stdout, PrintStream stderr) {
        CommandLine cl = new CommandLine(new StatCommand(stdout, stderr));
        cl.setOut(new PrintWriter(stdout, true));
        cl.setErr(new PrintWriter(stderr, true));
        return cl.execute(args);
    }

    @Override
    public Integer call() throws Exception {
        long intervalNanos = parseDuration(interval).toNanos();
        try (JMXConnector connector = JMXConnectorFactory.connect(new JMXServiceURL(serviceUrl()))) {
            MBeanServerConnection mbeans = connector.getMBeanServerConnection();
            Set<ObjectName> sockets = new TreeSet<>(mbeans.queryNames(new ObjectName(
                    "io.homa:type=HomaSocket,name=" + (name == null ? "*" : ObjectName.quote(name))), null));
            if (sockets.isEmpty()) {
                err.println("stat: no Homa socket MBean" + (name == null ? "" : " named " + name)
                        + " in that JVM: it must call HomaJmx.register(socket, name) or run with -Dio.homa.jmx=true");
                return 1;
            }
            Map<ObjectName, Map<String, Long>> last = new LinkedHashMap<>();
            for (ObjectName s : sockets) {
                last.put(s, sample(mbeans, s));
            }
            long lastAt = System.nanoTime();
            for (int i = 0; count == 0 || i < count; i++) {
                TimeUnit.NANOSECONDS.sleep(Math.max(0, lastAt + intervalNanos - System.nanoTime()));
                long now = System.nanoTime();
                double seconds = (now - lastAt) / 1e9;
                lastAt = now;
                for (ObjectName s : sockets) {
                    Map<String, Long> current = sample(mbeans, s);
                    out.print(StatReport.render(label(s), last.get(s), current, seconds));
                    last.put(s, current);
                }
                out.flush();
            }
        }
        return 0;
    }

    /** The socket's registered name, unquoted. */
    private static String label(ObjectName socket) {
        String n = socket.getKeyProperty("name");
        return n.startsWith("\"") ? ObjectName.unquote(n) : n;
    }

    /** Every numeric attribute of one socket's MBean (one metrics snapshot in the target process). */
    static Map<String, Long> sample(MBeanServerConnection mbeans, ObjectName socket) throws Exception {
        List<String> names = new ArrayList<>();
        for (MBeanAttributeInfo a : mbeans.getMBeanInfo(socket).getAttributes()) {
            if (a.getType().equals("long")) {
                names.add(a.getName());
            }
        }
        Map<String, Long> values = new LinkedHashMap<>();
        for (Attribute a : mbeans.getAttributes(socket, names.toArray(new String[0])).asList()) {
            values.put(a.getName(), ((Number) a.getValue()).longValue());
        }
        return values;
    }

    private String serviceUrl() throws Exception {
        if (target.url != null) {
            return target.url;
        }
        if (target.hostPort != null) {
            return "service:jmx:rmi:///jndi/rmi://" + target.hostPort + "/jmxrmi";
        }
        VirtualMachine vm = VirtualMachine.attach(Long.toString(target.pid));
        try {
            return vm.startLocalManagementAgent();
        } finally {
            vm.detach();
        }
    }

    /** "250ms", "1s", "2m" or a bare number of seconds. */
    static Duration parseDuration(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT);
        try {
            Duration d;
            if (t.endsWith("ms")) {
                d = Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
            } else if (t.endsWith("s")) {
                d = Duration.ofMillis(Math.round(Double.parseDouble(t.substring(0, t.length() - 1)) * 1000));
            } else if (t.endsWith("m")) {
                d = Duration.ofSeconds(Long.parseLong(t.substring(0, t.length() - 1)) * 60);
            } else {
                d = Duration.ofMillis(Math.round(Double.parseDouble(t) * 1000));
            }
            if (d.isZero() || d.isNegative()) {
                throw new IllegalArgumentException("interval must be positive: " + s);
            }
            return d;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a duration (e.g. 500ms, 1s, 1m): " + s);
        }
    }
}
