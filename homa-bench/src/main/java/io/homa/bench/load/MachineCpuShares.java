package io.homa.bench.load;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Where the machine's CPU time went over the measured interval ({@code /proc/stat}'s first line):
 * the shares of interrupts and softirqs (the kernel's network stack, which runs ahead of every
 * thread), of steal (a virtual machine's vCPU not running) and of idle. Machine-wide, so every
 * node on one machine reports the same figures; absent (empty) where there is no /proc/stat.
 */
final class MachineCpuShares {
    // user nice system idle iowait irq softirq steal (USER_HZ ticks)
    private long[] start;
    private long[] end;

    void start() {
        start = read();
    }

    void stop() {
        end = read();
    }

    private static long[] read() {
        try {
            String line = Files.readAllLines(Path.of("/proc/stat"), StandardCharsets.US_ASCII).get(0);
            String[] f = line.trim().split("\\s+");
            long[] v = new long[8];
            for (int i = 0; i < v.length && i + 1 < f.length; i++) {
                v[i] = Long.parseLong(f[i + 1]);
            }
            return v;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** {@code machineUserShare}, {@code machineSystemShare}, {@code machineIrqShare}, {@code machineSoftirqShare}, {@code machineStealShare}, {@code machineIdleShare}. */
    Map<String, Object> json() {
        Map<String, Object> m = new LinkedHashMap<>();
        if (start == null || end == null) {
            return m;
        }
        long total = 0;
        for (int i = 0; i < start.length; i++) {
            total += end[i] - start[i];
        }
        if (total <= 0) {
            return m;
        }
        m.put("machineUserShare", (double) (end[0] + end[1] - start[0] - start[1]) / total);
        m.put("machineSystemShare", (double) (end[2] - start[2]) / total);
        m.put("machineIrqShare", (double) (end[5] - start[5]) / total);
        m.put("machineSoftirqShare", (double) (end[6] - start[6]) / total);
        m.put("machineStealShare", (double) (end[7] - start[7]) / total);
        m.put("machineIdleShare", (double) (end[3] - start[3]) / total);
        return m;
    }
}
