package io.homa.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** What results.json says about the machine and the conditions of the run. */
public final class MachineInfo {
    /**
     * A 1-minute load average above this per CPU at the start means other work competes for the
     * CPU: the figures will be noisy, and compare says so.
     */
    public static final double BUSY_LOAD_PER_CPU = 0.5;

    private MachineInfo() {
    }

    public static Map<String, Object> collect() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        m.put("arch", System.getProperty("os.arch"));
        m.put("cpus", Runtime.getRuntime().availableProcessors());
        String cpu = cpuModel();
        if (cpu != null) {
            m.put("cpu_model", cpu);
        }
        m.put("memory_gib", Math.round(totalMemoryGib() * 10) / 10.0);
        m.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        m.put("netty_transport", NettyIo.transportName());
        Integer mtu = loopbackMtu();
        if (mtu != null) {
            m.put("loopback_mtu", mtu);
        }
        double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        int cpus = Runtime.getRuntime().availableProcessors();
        m.put("load_average_at_start", load);
        m.put("load_average_per_cpu_at_start", load < 0 ? Double.NaN : load / cpus);
        m.put("busy_at_start", load / cpus > BUSY_LOAD_PER_CPU);
        m.put("allocation_counter", CostMeter.allocationCounter());
        // Experiments set Homa's knobs through system properties (homa.bench.maxIncoming, ...),
        // often by JAVA_TOOL_OPTIONS: the results file must say which were in force.
        m.put("settings", settings());
        // Homa's sockets ask for 4 MiB of receive buffer; the kernel caps it at this (Linux only).
        Long rmemMax = rmemMax();
        if (rmemMax != null) {
            m.put("rmem_max", rmemMax);
        }
        String toolOptions = System.getenv("JAVA_TOOL_OPTIONS");
        if (toolOptions != null && !toolOptions.isBlank()) {
            m.put("java_tool_options", toolOptions);
        }
        m.put("timestamp", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
        return m;
    }

    /** The system properties that steer homa-java and this benchmark ({@code homa.*}), sorted. */
    static Map<String, Object> settings() {
        Map<String, Object> s = new java.util.TreeMap<>();
        for (String name : System.getProperties().stringPropertyNames()) {
            if (name.startsWith("homa.")) {
                s.put(name, System.getProperty(name));
            }
        }
        return s;
    }

    /** {@code net.core.rmem_max}, or null where it cannot be read (not Linux). */
    static Long rmemMax() {
        try {
            return Long.parseLong(Files.readString(Path.of("/proc/sys/net/core/rmem_max"), StandardCharsets.US_ASCII).trim());
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static String cpuModel() {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/cpuinfo"), StandardCharsets.UTF_8);
            for (String l : lines) {
                if (l.startsWith("model name")) {
                    return l.substring(l.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // not Linux
        }
        return null;
    }

    private static double totalMemoryGib() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/meminfo"), StandardCharsets.UTF_8)) {
                if (l.startsWith("MemTotal:")) {
                    return Long.parseLong(l.replaceAll("[^0-9]", "")) / 1024.0 / 1024.0;
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // not Linux
        }
        return Runtime.getRuntime().maxMemory() / (1024.0 * 1024 * 1024);
    }

    private static Integer loopbackMtu() {
        try {
            return Integer.parseInt(Files.readString(Path.of("/sys/class/net/lo/mtu")).trim());
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
