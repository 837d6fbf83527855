package io.homa.collective;

import io.homa.collective.internal.Schedules;

import java.util.SplittableRandom;

/** Each rank's inputs (seeded) and the results computed directly, to check the collectives against. */
final class Reference {
    private Reference() {
    }

    static int[][] ints(long seed, int ranks, int elements) {
        SplittableRandom r = new SplittableRandom(seed);
        int[][] a = new int[ranks][elements];
        for (int[] row : a) {
            for (int i = 0; i < elements; i++) {
                row[i] = r.nextInt(-1_000_000, 1_000_000);
            }
        }
        return a;
    }

    /** Whole numbers in floats (so sums are exact in any order). */
    static float[][] floats(long seed, int ranks, int elements) {
        int[][] v = ints(seed, ranks, elements);
        float[][] a = new float[ranks][elements];
        for (int k = 0; k < ranks; k++) {
            for (int i = 0; i < elements; i++) {
                a[k][i] = v[k][i] % 10_000;
            }
        }
        return a;
    }

    static long[] sum(int[][] a) {
        long[] s = new long[a[0].length];
        for (int[] row : a) {
            for (int i = 0; i < row.length; i++) {
                s[i] += row[i];
            }
        }
        return s;
    }

    static int[] intSum(int[][] a) {
        int[] s = new int[a[0].length];
        for (int[] row : a) {
            for (int i = 0; i < row.length; i++) {
                s[i] += row[i];
            }
        }
        return s;
    }

    static float[] max(float[][] a) {
        float[] m = a[0].clone();
        for (float[] row : a) {
            for (int i = 0; i < row.length; i++) {
                m[i] = Math.max(m[i], row[i]);
            }
        }
        return m;
    }

    static long[] min(long[][] a) {
        long[] m = a[0].clone();
        for (long[] row : a) {
            for (int i = 0; i < row.length; i++) {
                m[i] = Math.min(m[i], row[i]);
            }
        }
        return m;
    }

    static long[][] longs(long seed, int ranks, int elements) {
        int[][] v = ints(seed, ranks, elements);
        long[][] a = new long[ranks][elements];
        for (int k = 0; k < ranks; k++) {
            for (int i = 0; i < elements; i++) {
                a[k][i] = (long) v[k][i] << 20;
            }
        }
        return a;
    }

    static int blockOffset(int elements, int n, int r) {
        return Schedules.blockOffset(elements, n, r);
    }

    static int blockLength(int elements, int n, int r) {
        return Schedules.blockLength(elements, n, r);
    }
}
