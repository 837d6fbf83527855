package io.homa.core.sim;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.random.RandomGenerator;

/**
 * A message-size distribution from the Homa papers (W1..W5, shipped as CDF resources beside this
 * class), sampled by inverse CDF: draw u in [0,1) and take the first length whose cumulative
 * fraction exceeds u.
 */
public final class Workload {
    private final String name;
    private final int[] lengths;
    private final double[] cumulative;

    private Workload(String name, int[] lengths, double[] cumulative) {
        this.name = name;
        this.lengths = lengths;
        this.cumulative = cumulative;
    }

    /** Loads "w1".."w5" (case-insensitive). */
    public static Workload named(String name) {
        String key = name.toLowerCase(Locale.ROOT);
        String resource = "workloads/" + key + ".csv"; // next to this class
        try (InputStream in = Workload.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalArgumentException("unknown workload '" + name + "': expected w1..w5");
            }
            return parse(key, in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Workload parse(String name, InputStream in) throws IOException {
        List<int[]> rows = new ArrayList<>();
        List<Double> fractions = new ArrayList<>();
        BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        String line;
        while ((line = r.readLine()) != null) {
            line = line.trim();
            if (line.isEmpty() || line.startsWith("length")) {
                continue;
            }
            String[] parts = line.split(",");
            rows.add(new int[]{Integer.parseInt(parts[0].trim())});
            fractions.add(Double.parseDouble(parts[1].trim()));
        }
        int[] lengths = new int[rows.size()];
        double[] cumulative = new double[rows.size()];
        for (int i = 0; i < lengths.length; i++) {
            lengths[i] = rows.get(i)[0];
            cumulative[i] = fractions.get(i);
        }
        return new Workload(name, lengths, cumulative);
    }

    public String name() {
        return name;
    }

    /**
     * Lengths spread evenly over {@code [min, max]} (in 100 steps): short RPCs of a kind a workload
     * file does not describe, such as a training job's coordination RPCs beside its all-reduce.
     */
    public static Workload uniform(int min, int max) {
        if (min < 0 || max < min) {
            throw new IllegalArgumentException("need 0 <= min <= max, not " + min + ", " + max);
        }
        int points = max == min ? 1 : 100;
        int[] lengths = new int[points];
        double[] cumulative = new double[points];
        for (int i = 0; i < points; i++) {
            lengths[i] = points == 1 ? min : min + (int) ((long) (max - min) * i / (points - 1));
            cumulative[i] = (i + 1) / (double) points;
        }
        return new Workload("uniform-" + min + "-" + max, lengths, cumulative);
    }

    /** One message length drawn from the distribution. */
    public int sample(RandomGenerator random) {
        double u = random.nextDouble();
        int lo = 0;
        int hi = cumulative.length - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (cumulative[mid] > u) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lengths[lo];
    }

    /** The largest length in the distribution. */
    public int maxLength() {
        return lengths[lengths.length - 1];
    }

    /** The smallest length {@code x} with P(length <= x) >= q. */
    public int quantile(double q) {
        for (int i = 0; i < cumulative.length; i++) {
            if (cumulative[i] >= q) {
                return lengths[i];
            }
        }
        return maxLength();
    }
}
