package io.homa.bench.load;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The Linux scheduler's account of one thread: how long it has waited on a run queue, i.e.
 * runnable but not running ({@code /proc/thread-self/schedstat}, second field, nanoseconds). The
 * load generator reads it around each wait for a send time: a send that left late while the
 * thread waited for a CPU is the scheduler's doing, one that left late without such a wait is
 * the timer's or the JVM's. Opened on the thread it describes (the path names the opening
 * thread); where the file is missing (not Linux, no schedstats) every read returns -1.
 */
final class ThreadSchedStat implements AutoCloseable {
    private final FileChannel file;
    private final ByteBuffer buf = ByteBuffer.allocate(128);

    private ThreadSchedStat(FileChannel file) {
        this.file = file;
    }

    /** The calling thread's account, or one that reads -1 where the kernel gives none. */
    static ThreadSchedStat ofCurrentThread() {
        try {
            return new ThreadSchedStat(FileChannel.open(Path.of("/proc/thread-self/schedstat"), StandardOpenOption.READ));
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return new ThreadSchedStat(null);
        }
    }

    /** Nanoseconds the thread has spent runnable on a run queue but not running, -1 unknown. */
    long runQueueNanos() {
        if (file == null) {
            return -1;
        }
        try {
            buf.clear();
            // A positional read re-reads the file from its start (procfs regenerates it).
            int n = file.read(buf, 0);
            if (n <= 0) {
                return -1;
            }
            // "sum_exec_runtime run_delay pcount": the second number, parsed in place (it is read
            // twice per send, on the generator's thread: no String per read).
            byte[] b = buf.array();
            int i = 0;
            while (i < n && b[i] != ' ') {
                i++;
            }
            i++;
            long v = 0;
            int digits = 0;
            for (; i < n && b[i] >= '0' && b[i] <= '9'; i++, digits++) {
                v = v * 10 + (b[i] - '0');
            }
            return digits > 0 ? v : -1;
        } catch (IOException e) {
            return -1;
        }
    }

    @Override
    public void close() {
        if (file != null) {
            try {
                file.close();
            } catch (IOException ignored) {
                // read-only procfs file: nothing to lose
            }
        }
    }
}
